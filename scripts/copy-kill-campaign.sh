#!/usr/bin/env bash
# A copy (the replay_parquet receiver's emit: cases) killed with SIGKILL again and again while it
# copies, until a run finishes the backlog before its kill; then it counts the copy's rows.
# Every case must be one row: a batch the exporter wrote before the receiver saved its
# checkpoint is pushed again after the restart marked resent, and the exporter leaves it out
# (receiver README, "Each file once across restarts"). Builds the collector from this tree,
# writes a source dataset of RUNS agent runs through config/local.yaml (scripts/benchload's
# random-id corpus), then copies it with batch_size 16, killing each run 0.7-2.2 s after its
# start. Usage: scripts/copy-kill-campaign.sh [RUNS, default 20000] [SEED, default 21]
# Needs the ports of config/local.yaml (4317, 4318, 8790, 8888) free.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-20000} RANDOM=${2:-21}
work=$(mktemp -d)
pid=""
trap '[ -z "$pid" ] || kill -9 "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT
go build -o "$work/reprise" ./cmd/reprise
go build -o "$work/benchload" ./scripts/benchload
go build -o "$work/countrows" ./scripts/countrows

mkdir "$work/src"
config=$PWD/config/local.yaml
(cd "$work/src" && exec env REPRISE_SCRUB_KEY=k "$work/reprise" --config "$config" >log 2>&1) &
pid=$!
until curl -s -o /dev/null http://127.0.0.1:4318/; do sleep 0.2; done
"$work/benchload" -fixtures testdata/otlp -runs "$runs" -seed 7
sleep 20 # root grace period, the hand-off, file_max_age 10 s: every case is published
kill -TERM "$pid"; wait "$pid" || true; pid=""
echo "source: $("$work/countrows" "$work/src/reprise-data")"

cat >"$work/copy.yaml" <<YAML
extensions:
  file_storage:
    directory: $work/state
    create_directory: true
receivers:
  replay_parquet:
    directory: $work/src/reprise-data
    storage: file_storage
    emit: cases
    batch_size: 16
    select:
      datasets: [cases, quarantine]
exporters:
  replay_parquet:
    directory: $work/copy
service:
  extensions: [file_storage]
  telemetry:
    metrics:
      level: none
  pipelines:
    traces:
      receivers: [replay_parquet]
      exporters: [replay_parquet]
YAML
kills=0 left_out=0
for i in $(seq 1 1000); do
  "$work/reprise" --config "$work/copy.yaml" >"$work/run.log" 2>&1 &
  pid=$!
  ms=$((700 + RANDOM % 1500))
  sleep "$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))"
  left_out=$((left_out + $(grep -c 'cases sent again after a crash are not written twice' "$work/run.log" || true)))
  if grep -q "backlog done" "$work/run.log"; then kill -TERM "$pid"; wait "$pid" || true; pid=""; break; fi
  kill -9 "$pid"; wait "$pid" 2>/dev/null || true; pid=""; kills=$((kills + 1))
done
echo "copy after $kills kills ($left_out batches sent again and left out): $("$work/countrows" "$work/copy")"
