#!/usr/bin/env bash
# End-to-end cost of Reprise against the stock collector it replaces, side by side on the same
# input: N agent runs from the four fixture recordings in testdata/otlp with random trace and
# span ids (traces + GenAI log records, OTLP/HTTP protobuf, scripts/benchload), sent in a burst
# and paced, to
#   reprise: config/local.yaml minus the debug exporter (ports and directories moved into a
#            temporary directory, Prometheus metrics on a local port so that completion is read
#            from them), GOMEMLIMIT as that file's run line says;
#   stock:   ocb v0.165.0 build of otlpreceiver → contrib groupbytrace (wait_duration 2s) →
#            contrib file exporter (OTLP/JSON), logs straight to a second file exporter.
# The collectors run one at a time, alternating which goes first each round. For each run it
# prints CPU seconds of the collector process per 1,000 spans (utime + stime from
# /proc/<pid>/stat, from ready until the last case is written / the last span is in the file),
# peak RSS (VmHWM), peak anonymous RSS, output bytes and the Go heap bytes allocated per 1,000
# spans (the collector's own otelcol_process_runtime_total_alloc_bytes, which the machine's load
# does not move as it moves CPU seconds); then the medians and the ratios reprise / stock
# (for CPU and peak RSS also the lowest and highest ratio of a single round), and the
# dataset bytes against gzip -6 of the input as OTLP/JSON.
#
# Usage: scripts/bench-pipeline.sh [runs, default 5000] [rounds, default 3] [paced runs/s, default 500]
# The stock collector is built once into $BENCH_CACHE (default ~/.cache/reprise-bench).
# BENCH_KEEP=DIR keeps the last reprise dataset of each mode in DIR/burst and DIR/paced.
# BENCH_PROFILE=DIR writes a CPU profile of each reprise run, over the window whose CPU is
# measured, to DIR/<mode>-<round>.pprof (go tool pprof -top -cum DIR/paced-1.pprof): reprise is
# then built with scripts/benchpipeline/cpuprofile.go added (build tag reprise_cpuprofile), which
# costs nothing until the profile is started. A heap profile of each run, taken when the last
# client request is answered, goes to DIR/<mode>-<round>-heap.pprof
# (go tool pprof -sample_index=inuse_space -top DIR/paced-1-heap.pprof), and one taken once the
# last case is written to DIR/<mode>-<round>-end-heap.pprof: what the whole run allocated, where
# (go tool pprof -sample_index=alloc_space -top -cum DIR/burst-1-end-heap.pprof).
# BENCH_SMAPS=1 prints, after each run, the resident MiB of each mapping (the binary, anonymous
# memory, mapped files) of the collector at its highest RSS, copied from /proc/<pid>/smaps.
# BENCH_FILE_MAX_AGE=0s overrides the exporter's file_max_age (default: config/local.yaml's, 10s).
# Memory trade-offs: BENCH_GOMEMLIMIT (default: the value config/local.yaml's run line gives),
# BENCH_FSYNC=true sets file_storage's fsync (a flush to the disk after every write-ahead commit).
# BENCH_GOGC (default 100, Go's) and BENCH_MAX_BUFFERED_BYTES (default: local.yaml's
# replay_case limits.max_buffered_bytes). BENCH_CONFIG=FILE[:FILE...] merges more config files
# (paths relative to the repository root, as BENCH_PROFILE's) over reprise's, in order (what a
# guarantee costs: scripts/benchpipeline/without-*.yaml). BENCH_REPRISE_FLAGS adds command-line
# flags to reprise's (word-split), e.g. --feature-gates=pdata.useProtoPooling.
# The clients' retries of 503 answers are printed per run, and how long the clients took to send
# the corpus (load_seconds). BENCH_CLIENTS: concurrent HTTP clients (default 8).
# BENCH_STAGES=1 also runs the same reprise binary cut after each stage, to show what each costs
# (the pipeline then ends in the nop exporter): "receiver" (otlp only), "processor-bare"
# (replay_case without its write-ahead copy and scrubbing), "processor" (replay_case as
# configured); "reprise" is the whole pipeline. A stage's run ends when the receiver has accepted
# every span and log record, or the processor has closed every case. The summary then gives
# each stage's median CPU, its ratio to stock and what it adds to the stage before.
# BENCH_MODES: the modes to run (default "burst paced").
# BENCH_TOOLS=N: every model call offers N tools of ~1.2 KB of schema each, recorded wherever the
# fixture's instrumentation records tools (benchload -tools), as production agents offer theirs;
# the fixtures offer one small tool.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5000}
rounds=${2:-3}
rate=${3:-500}
cache=${BENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/reprise-bench}
otlp_port=24318 grpc_port=24317 metrics_port=28888 replay_port=28790 profile_port=28791
export GOFLAGS=-buildvcs=false
# GOMEMLIMIT as config/local.yaml's run line sets it.
gomemlimit=${BENCH_GOMEMLIMIT:-$(sed -n 's/^# Run: GOMEMLIMIT=\([^ ]*\) .*/\1/p' config/local.yaml)}
[ -n "$gomemlimit" ] || { echo "no GOMEMLIMIT in config/local.yaml's run line; set BENCH_GOMEMLIMIT" >&2; exit 1; }
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
for cmd in go builder curl gzip; do
  command -v $cmd >/dev/null || { echo "missing $cmd (builder: go install go.opentelemetry.io/collector/cmd/builder@v0.165.0)" >&2; exit 1; }
done
[ -z "${BENCH_PROFILE:-}" ] || BENCH_PROFILE=$(realpath -m "$BENCH_PROFILE")
extra_configs=()
IFS=: read -ra bench_configs <<<"${BENCH_CONFIG:-}"
for f in "${bench_configs[@]}"; do extra_configs+=(--config "$(realpath "$f")"); done
for port in $otlp_port $grpc_port $metrics_port $replay_port $profile_port; do
  if (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null; then echo "port $port is in use" >&2; exit 1; fi
done

# --- builds -----------------------------------------------------------------------------------
# Both collectors are built as ocb builds a distribution by default (CGO_ENABLED=0, -trimpath,
# -ldflags '-s -w'): the flags decide how much of the binary is mapped, which peak RSS counts,
# and without cgo the binary is static (no libc mapped). ocb's default is cgo off (its
# dist.cgo_enabled); builder-config.yaml keeps it, so a reprise built by ocb is static too.
export CGO_ENABLED=0
manifest=scripts/benchpipeline/stock-builder-config.yaml
stock=$cache/stockcollector
sum=$( (cat "$manifest"; echo "CGO_ENABLED=$CGO_ENABLED") | sha256sum | cut -c1-16)
if [ ! -x "$stock" ] || [ "$(cat "$cache/manifest.sum" 2>/dev/null)" != "$sum" ]; then
  echo "building the stock collector with ocb into $cache (a few minutes the first time)"
  mkdir -p "$cache"
  sed "s#output_path: .*#output_path: $cache/src#" "$manifest" > "$cache/manifest.yaml"
  # ocb's own `go mod tidy` fails: fileexporter's tests import otlpencodingextension v0.165.1,
  # which the module proxy does not serve. Generate, tidy with -e (tests' imports only), build.
  builder --config "$cache/manifest.yaml" --skip-compilation >"$cache/ocb.log" 2>&1 || true
  [ -f "$cache/src/go.mod" ] || { cat "$cache/ocb.log" >&2; exit 1; }
  (cd "$cache/src" && go mod tidy -e >>"$cache/ocb.log" 2>&1 && go build -trimpath -ldflags='-s -w' -o "$stock" .)
  echo "$sum" > "$cache/manifest.sum"
fi
if [ -n "${BENCH_PROFILE:-}" ]; then
  mkdir -p "$BENCH_PROFILE"
  printf '{"Replace": {"%s": "%s"}}' "$PWD/cmd/reprise/zz_cpuprofile.go" "$PWD/scripts/benchpipeline/cpuprofile.go" > "$work/overlay.json"
  go build -trimpath -ldflags='-s -w' -tags reprise_cpuprofile -overlay "$work/overlay.json" -o "$work/bin-reprise" ./cmd/reprise
else
  go build -trimpath -ldflags='-s -w' -o "$work/bin-reprise" ./cmd/reprise
fi
# Both run from a copy, as an installed binary would: a file fresh from the linker can sit in the
# page cache as large folios that are mapped whole (docs/benchmarks.md: up to ~25 MiB more RSS),
# while a stock binary built long ago has been read back in small pages.
mv "$work/bin-reprise" "$work/bin-reprise.built" && cp "$work/bin-reprise.built" "$work/bin-reprise" && rm "$work/bin-reprise.built"
cp "$stock" "$work/bin-stock"
go build -o "$work/benchload" ./scripts/benchload
go build -o "$work/reconcile" ./scripts/reconcile

# --- input ------------------------------------------------------------------------------------
"$work/benchload" -runs "$runs" -tools "${BENCH_TOOLS:-0}" -json "$work/corpus.json"
json_bytes=$(wc -c < "$work/corpus.json")
items=$(grep -o '"spanId"' "$work/corpus.json" | wc -l)   # spans + log records with a span id
gzip_bytes=$(gzip -6 -c "$work/corpus.json" | wc -c)
rm "$work/corpus.json"

# --- configs ----------------------------------------------------------------------------------
# Overrides merged over config/local.yaml (maps merge, lists are replaced): same components and
# settings, the debug exporter out of the pipelines, everything else in $work/reprise.
buffer_override=
if [ -n "${BENCH_MAX_BUFFERED_BYTES:-}" ]; then
  buffer_override="processors: {replay_case: {limits: {max_buffered_bytes: $BENCH_MAX_BUFFERED_BYTES}}}"
fi
cat > "$work/reprise-overrides.yaml" <<YAML
extensions:
  file_storage: {directory: $work/reprise/queue${BENCH_FSYNC:+, fsync: $BENCH_FSYNC}}
  replay: {endpoint: 127.0.0.1:$replay_port, directory: $work/reprise/data}
receivers:
  otlp: {protocols: {grpc: {endpoint: 127.0.0.1:$grpc_port}, http: {endpoint: 127.0.0.1:$otlp_port}}}
$buffer_override
exporters:
  replay_parquet: {directory: $work/reprise/data${BENCH_FILE_MAX_AGE:+, file_max_age: $BENCH_FILE_MAX_AGE}}
  nop: {}
service:
  telemetry: {metrics: {level: normal, readers: [{pull: {exporter: {prometheus: {host: 127.0.0.1, port: $metrics_port}}}}]}}
  pipelines:
    traces: {exporters: [replay_parquet]}
    logs: {exporters: [nop]}
YAML
cat > "$work/stock.yaml" <<YAML
receivers:
  otlp: {protocols: {http: {endpoint: 127.0.0.1:$otlp_port}}}
processors:
  groupbytrace: {wait_duration: 2s}
exporters:
  file/traces: {path: $work/stock/traces.json}
  file/logs: {path: $work/stock/logs.json}
service:
  telemetry: {metrics: {level: normal, readers: [{pull: {exporter: {prometheus: {host: 127.0.0.1, port: $metrics_port}}}}]}}
  pipelines:
    traces: {receivers: [otlp], processors: [groupbytrace], exporters: [file/traces]}
    logs: {receivers: [otlp], exporters: [file/logs]}
YAML

# --- one measured run -------------------------------------------------------------------------
ticks_per_s=$(getconf CLK_TCK)
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
io_writes() { awk '/^syscw/ {c = $2} /^wchar/ {b = $2} END {print c, b}' "/proc/$1/io"; }
# Go heap bytes allocated so far, from the collector's process metrics. The collector reads them
# at most once a second (service/internal/proctelemetry), so this waits that long first for a
# value that includes what came before. awk reads the whole page: leaving early would fail
# curl's write, and with it the pipeline.
heap_allocated() {
  sleep 1.1
  curl -sf --max-time 10 "http://127.0.0.1:$metrics_port/metrics" |
    awk '/^otelcol_process_runtime_total_alloc_bytes/ && v == "" {v = $NF} END {if (v == "") exit 1; printf "%.0f\n", v}'
}
ready() { # the OTLP/HTTP receiver answers an empty export with 200
  [ "$(curl -s -o /dev/null -w '%{http_code}' -X POST -H 'Content-Type: application/x-protobuf' \
    --data-binary '' "http://127.0.0.1:$otlp_port/v1/traces")" = 200 ]
}
done_reprise() { # every run is a row (accepted or quarantined) and the metrics agree
  local out
  out=$("$work/reconcile" -metrics "http://127.0.0.1:$metrics_port/metrics" -dataset "$work/reprise/data" 2>/dev/null) || return 1
  echo "$out" > "$work/reconcile.txt"
  awk -v want="$runs" '/^accepted cases|^quarantined cases/ {rows += $NF} END {exit rows != want}' <<<"$out"
}
done_stock() { # every span and log record is in the output files
  [ "$(cat "$work/stock/traces.json" "$work/stock/logs.json" 2>/dev/null | grep -o '"spanId"' | wc -l)" -ge "$items" ]
}

# The stages of BENCH_STAGES: each is config merged over reprise's (stage_configs, files
# separated by ":" as in BENCH_CONFIG) and a test of completion (done_<stage>). processor-bare
# is processor without the two guarantees, taken out by part 10's files.
stages=()
declare -A stage_configs=()
if [ -n "${BENCH_STAGES:-}" ]; then
  stages=(receiver processor-bare processor)
  cat > "$work/stage-receiver.yaml" <<YAML
service:
  pipelines:
    traces: {processors: [], exporters: [nop]}
    logs: {processors: [], exporters: [nop]}
YAML
  cat > "$work/stage-processor.yaml" <<YAML
service:
  pipelines:
    traces: {exporters: [nop]}
YAML
  stage_configs=(
    [receiver]="$work/stage-receiver.yaml"
    [processor]="$work/stage-processor.yaml"
    [processor-bare]="$work/stage-processor.yaml:$PWD/scripts/benchpipeline/without-write-ahead.yaml:$PWD/scripts/benchpipeline/without-scrubbing.yaml"
  )
fi
heap_profile() { # NAME [QUERY]: the profiled run's heap profile into ${profiling%.pprof}-NAME.pprof
  [ -z "$profiling" ] || curl -sf -X POST "http://127.0.0.1:$profile_port/heap?${2:+$2&}file=${profiling%.pprof}-$1.pprof" >/dev/null ||
    echo "could not write the heap profile" >&2
}
metric_sum() { # the sum of every series of a metric on the collector's metrics page
  curl -sf --max-time 10 "http://127.0.0.1:$metrics_port/metrics" |
    awk -v m="$1" 'index($0, m) == 1 && substr($0, length(m) + 1, 1) ~ /[_{ ]/ {s += $NF} END {printf "%d\n", s}'
}
done_receiver() { # every span and log record accepted
  [ "$(metric_sum otelcol_receiver_accepted_spans)" -ge "$spans" ] &&
    [ "$(metric_sum otelcol_receiver_accepted_log_records)" -ge "$log_records" ]
}
done_processor() { [ "$(metric_sum otelcol_processor_replay_case_cases_closed)" -ge "$runs" ]; }
done_processor-bare() { done_processor; }

run() { # collector mode → one result line
  local who=$1 mode=$2 pid t0 t1 hwm bytes load profiling w0 w1 a0 a1
  rm -rf "$work/reprise" "$work/stock" "$work/anon"; mkdir -p "$work/reprise/data" "$work/stock"
  if [ "$who" != stock ]; then
    stage_config=()
    IFS=: read -ra files <<<"${stage_configs[$who]:-}"
    for f in ${files[@]+"${files[@]}"}; do stage_config+=(--config "$f"); done
    REPRISE_CPUPROFILE_ADDR=${BENCH_PROFILE:+127.0.0.1:$profile_port} \
    REPRISE_SCRUB_KEY=bench-key GOMEMLIMIT=$gomemlimit GOGC=${BENCH_GOGC:-100} "$work/bin-reprise" \
      --config config/local.yaml --config "$work/reprise-overrides.yaml" ${extra_configs[@]+"${extra_configs[@]}"} \
      ${stage_config[@]+"${stage_config[@]}"} ${BENCH_REPRISE_FLAGS:-} >"$work/$who.log" 2>&1 &
  else
    "$work/bin-stock" --config "$work/stock.yaml" >"$work/$who.log" 2>&1 &
  fi
  pid=$!
  # Peak anonymous RSS (heap and stacks): VmHWM also counts the pages of memory-mapped files,
  # such as file_storage's bbolt databases, which the kernel can drop.
  (anon=0; while [ -e "/proc/$pid/status" ]; do
    a=$(awk '/RssAnon/ {print $2}' "/proc/$pid/status" 2>/dev/null) || break
    [ -n "$a" ] && (( a > anon )) && { anon=$a; echo "$anon" > "$work/anon"; }
    if [ -n "${BENCH_SMAPS:-}" ]; then
      r=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status" 2>/dev/null) || break
      [ -n "$r" ] && (( r > ${rss:-0} )) && { rss=$r; cp "/proc/$pid/smaps" "$work/smaps" 2>/dev/null || true; }
    fi
    sleep 0.1
  done) &
  sampler=$!
  # run is a pipeline's subshell: the script's own trap does not see its jobs.
  trap 'kill $pid $sampler 2>/dev/null || true' EXIT
  for _ in $(seq 300); do ready && break; sleep 0.1; done
  ready || { echo "$who did not start:" >&2; tail -20 "$work/$who.log" >&2; exit 1; }
  profiling=
  if [ "$who" != stock ] && [ -n "${BENCH_PROFILE:-}" ]; then
    profiling=$BENCH_PROFILE/$mode-$round.pprof
    [ "$who" = reprise ] || profiling=$BENCH_PROFILE/$who-$mode-$round.pprof
    curl -sf -X POST "http://127.0.0.1:$profile_port/start?file=$profiling" || { echo "could not start the CPU profile" >&2; exit 1; }
  fi
  a0=$(heap_allocated) || { echo "$who: could not read its heap metric" >&2; exit 1; }
  t0=$(cpu_ticks $pid) w0=$(io_writes $pid)
  if [ "$mode" = burst ]; then rate_flag=0; else rate_flag=$rate; fi
  load=$("$work/benchload" -runs "$runs" -tools "${BENCH_TOOLS:-0}" -rate "$rate_flag" -workers "${BENCH_CLIENTS:-8}" -endpoint "http://127.0.0.1:$otlp_port")
  # The heap as the last client request is answered: what the collector holds while loaded.
  heap_profile heap
  spans=$(sed 's/.*spans=\([0-9]*\).*/\1/' <<<"$load")
  log_records=$(sed 's/.*log_records=\([0-9]*\).*/\1/' <<<"$load")
  retries=$(sed 's/.*retries=\([0-9]*\).*/\1/' <<<"$load")
  sent_s=$(sed 's/.*seconds=\([0-9.]*\).*/\1/' <<<"$load")
  for _ in $(seq 600); do "done_$who" && break; sleep 1; done
  "done_$who" || { echo "$who: not everything arrived within 10 minutes ($load)" >&2; cat "$work/reconcile.txt" >&2 || true; exit 1; }
  t1=$(cpu_ticks $pid) w1=$(io_writes $pid)
  [ -z "$profiling" ] || curl -sf -X POST "http://127.0.0.1:$profile_port/stop" || echo "could not stop the CPU profile" >&2
  a1=$(heap_allocated) || { echo "$who: could not read its heap metric" >&2; exit 1; }
  # Once every case is written, after the heap metric is read: its alloc_space is everything the
  # process allocated since it started (go tool pprof -sample_index=alloc_space). gc=1 collects
  # first, as a heap profile counts allocations only up to the last collection.
  heap_profile end-heap gc=1
  hwm=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status")
  kill -TERM $pid; wait $pid || true
  wait $sampler || true
  anon=$(cat "$work/anon")
  if [ -n "${BENCH_SMAPS:-}" ] && [ -f "$work/smaps" ]; then # mappings of at least 1 MiB, largest first
    awk -v run="$who $mode" '/^[0-9a-f]+-[0-9a-f]+ / {name = ($6 == "" ? "[anonymous]" : $6)} /^Rss:/ {kib[name] += $2}
      END {for (n in kib) if (kib[n] >= 1024) printf "  %s at peak RSS: %d MiB %s\n", run, kib[n] / 1024, n}' "$work/smaps" | sort -k6,6rn >&2
    rm -f "$work/smaps"
  fi
  if [ "$who" != stock ]; then
    bytes=$(du -sb "$work/reprise/data" | cut -f1)
    if [ -n "${BENCH_KEEP:-}" ]; then rm -rf "$BENCH_KEEP/$mode"; mkdir -p "$BENCH_KEEP"; cp -r "$work/reprise/data" "$BENCH_KEEP/$mode"; fi
  else bytes=$(cat "$work/stock/"*.json | wc -c); fi
  awk -v w="$who" -v m="$mode" -v c=$((t1 - t0)) -v hz="$ticks_per_s" -v s="$spans" -v h="$hwm" -v b="$bytes" -v a="$anon" -v r="$retries" -v ss="$sent_s" \
    -v w0="$w0" -v w1="$w1" -v a0="$a0" -v a1="$a1" \
    'BEGIN {split(w0, x, " "); split(w1, y, " ")
      printf "%-8s %-6s cpu_s_per_1000_spans %.4f peak_rss_mib %.0f output_bytes %d peak_anon_rss_mib %.0f retried_requests %d write_calls %d written_mib %.1f heap_alloc_mib_per_1000_spans %.2f load_seconds %.2f\n", w, m, c / hz / s * 1000, h / 1024, b, a / 1024, r, y[1] - x[1], (y[2] - x[2]) / 1048576, (a1 - a0) / 1048576 / s * 1000, ss}'
}

echo "corpus: $runs runs; input as OTLP/JSON $json_bytes bytes, gzip -6 $gzip_bytes bytes"
for round in $(seq "$rounds"); do
  for mode in ${BENCH_MODES:-burst paced}; do
    if (( round % 2 )); then order="stock ${stages[*]} reprise"; else order="reprise ${stages[*]} stock"; fi
    for who in $order; do run "$who" "$mode" | tee -a "$work/results.txt"; done
  done
done

# --- summary ----------------------------------------------------------------------------------
# Medians and ratios; with BENCH_STAGES, then each stage's median CPU and heap, its ratio to
# stock and what it adds to the stage before it.
awk -v gz="$gzip_bytes" -v stages="${stages[*]}" '
  function median(key,   n, i, j, t, a) {
    n = split(vals[key], a, " ")
    for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
    return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2
  }
  # The lowest and highest of the rounds ratios reprise / stock: each round runs both collectors
  # back to back, so a round is a side-by-side pair and the range shows how far the machine moves them.
  function ratios(key,   n, i, r, lo, hi, a, b) {
    n = split(vals["reprise " key], a, " "); split(vals["stock " key], b, " ")
    for (i = 1; i <= n; i++) { r = a[i] / b[i]; if (i == 1 || r < lo) lo = r; if (i == 1 || r > hi) hi = r }
    return sprintf("%.2f-%.2fx", lo, hi)
  }
  { vals[$1 " " $2 " cpu"] = vals[$1 " " $2 " cpu"] " " $4
    vals[$1 " " $2 " rss"] = vals[$1 " " $2 " rss"] " " $6
    vals[$1 " " $2 " out"] = vals[$1 " " $2 " out"] " " $8
    vals[$1 " " $2 " anon"] = vals[$1 " " $2 " anon"] " " $10
    vals[$1 " " $2 " alloc"] = vals[$1 " " $2 " alloc"] " " $18
    seen[$2] = 1 }
  END {
    print ""
    printf "%-6s %-34s %12s %12s %8s  %s\n", "mode", "median of the rounds", "reprise", "stock", "ratio", "ratio per round"
    split("burst paced", modes, " ")
    for (i = 1; i <= 2; i++) {
      m = modes[i]
      if (!seen[m]) continue
      rc = median("reprise " m " cpu"); sc = median("stock " m " cpu")
      rr = median("reprise " m " rss"); sr = median("stock " m " rss")
      ro = median("reprise " m " out"); so = median("stock " m " out")
      printf "%-6s %-34s %12.4f %12.4f %7.2fx  %s\n", m, "CPU s per 1,000 spans", rc, sc, rc / sc, ratios(m " cpu")
      printf "%-6s %-34s %12.0f %12.0f %7.2fx  %s\n", m, "peak RSS MiB", rr, sr, rr / sr, ratios(m " rss")
      ra = median("reprise " m " anon"); sa = median("stock " m " anon")
      printf "%-6s %-34s %12.0f %12.0f %7.2fx\n", m, "peak anonymous RSS MiB", ra, sa, ra / sa
      rh = median("reprise " m " alloc"); sh = median("stock " m " alloc")
      printf "%-6s %-34s %12.2f %12.2f %7.2fx  %s\n", m, "heap MiB allocated / 1,000 spans", rh, sh, rh / sh, ratios(m " alloc")
      printf "%-6s %-34s %12d %12d %7.3fx\n", m, "output bytes", ro, so, ro / so
      printf "%-6s %-34s %12d %12d %7.3fx\n", m, "dataset bytes vs gzip -6 OTLP/JSON", ro, gz, ro / gz
    }
    if (stages == "") exit
    print ""
    printf "%-6s %-16s %14s %9s %14s %14s %12s\n", "mode", "reprise cut after", "CPU s / 1,000", "vs stock", "adds CPU", "heap MiB/1,000", "adds heap"
    n = split(stages " reprise", who, " ")
    for (i = 1; i <= 2; i++) {
      m = modes[i]
      if (!seen[m]) continue
      sc = median("stock " m " cpu")
      printf "%-6s %-16s %14.4f %8.2fx %14s %14.2f %12s\n", m, "(stock)", sc, 1, "", median("stock " m " alloc"), ""
      pc = 0; pa = 0
      for (k = 1; k <= n; k++) {
        c = median(who[k] " " m " cpu"); a = median(who[k] " " m " alloc")
        printf "%-6s %-16s %14.4f %8.2fx %+14.4f %14.2f %+12.2f\n", m, who[k], c, c / sc, c - pc, a, a - pa
        pc = c; pa = a
      }
    }
  }' "$work/results.txt"

