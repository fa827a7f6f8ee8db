#!/usr/bin/env bash
# Memory of the collector built from this tree (config/local.yaml, GOMEMLIMIT=192MiB, as
# scripts/idle-rss.sh runs it) while one very large trace arrives and is written: scripts/bigtrace
# sends it (its flags after the first argument), then the script waits until the processor holds
# nothing (otelcol_processor_replay_case_buffered_bytes 0 on :8888) and the dataset is merged.
# It prints the peak RSS (VmHWM: the binary's mapped pages count too), the peak anonymous RSS
# (RssAnon sampled every 50 ms: heap and stacks), the largest Go heap at the start of a GC and
# the largest live heap after one (GODEBUG=gctrace=1: "A->B->C MB", A and C), and the number of
# Parquet files the dataset holds. config/local.yaml listens on 127.0.0.1:4317, 4318, 8790 and 8888.
#
# Usage: scripts/big-trace-memory.sh [times, default 1] [bigtrace flags...]
#   scripts/big-trace-memory.sh 3 -spans 100000
#   scripts/big-trace-memory.sh 3 -spans 20000
#   scripts/big-trace-memory.sh 3 -spans 4 -per-request 4 -attr-bytes 4800000
set -euo pipefail
cd "$(dirname "$0")/.."
times=${1:-1}
shift || true
export CGO_ENABLED=0
work=$(mktemp -d)
pid=""
trap '[ -z "$pid" ] || kill "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT
go build -trimpath -ldflags='-s -w' -o "$work/built" ./cmd/reprise
cp "$work/built" "$work/reprise"
go build -o "$work/bigtrace" ./scripts/bigtrace
config=$PWD/config/local.yaml
metric() { curl -s http://127.0.0.1:8888/metrics | awk -v m="$1" '$1 ~ "^"m"({|$)" {s += $2} END {print s + 0}'; }
for i in $(seq 1 "$times"); do
  rm -rf "$work/run" && mkdir "$work/run"
  (cd "$work/run" && exec env GOMEMLIMIT=192MiB GODEBUG=gctrace=1 REPRISE_SCRUB_KEY=k "$work/reprise" --config "$config" >log 2>&1) &
  pid=$!
  until curl -s -o /dev/null http://127.0.0.1:4318/; do sleep 0.2; done
  peak_file=$work/anon
  echo 0 >"$peak_file"
  ( peak=0; while kill -0 "$pid" 2>/dev/null; do
      a=$(awk '/^RssAnon:/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)
      (( a > peak )) && { peak=$a; echo "$peak" >"$peak_file"; }
      sleep 0.05
    done ) &
  sampler=$!
  gcs=$(grep -c '^gc ' "$work/run/log" || true)
  "$work/bigtrace" -fixtures testdata/otlp "$@"
  sleep 3
  until [ "$(metric otelcol_processor_replay_case_buffered_bytes)" = 0 ]; do sleep 0.5; done
  sleep 13 # file_max_age 10 s: the staged segments are merged
  hwm=$(awk '/^VmHWM:/ {print $2}' "/proc/$pid/status")
  kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""
  wait "$sampler" 2>/dev/null || true
  heap=$(grep '^gc ' "$work/run/log" | tail -n +"$((gcs + 1))" | awk '{split($11, h, "->"); if (h[1] + 0 > a) a = h[1] + 0; if (h[3] + 0 > c) c = h[3] + 0} END {printf "%d MB at a GC start, %d MB live after one", a, c}')
  rows=$(find "$work/run/reprise-data" -name '*.parquet' -not -path '*staging*' | wc -l)
  echo "run $i: VmHWM $((hwm / 1024)) MiB, peak RssAnon $(( $(cat "$peak_file") / 1024 )) MiB, Go heap peak $heap; $rows Parquet files"
done
