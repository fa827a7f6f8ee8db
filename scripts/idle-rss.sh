#!/usr/bin/env bash
# Idle memory of the collector built from this tree, as scripts/bench-pipeline.sh builds and runs
# it (stripped, from a copy of the binary, GOMEMLIMIT=192MiB, config/local.yaml), read from
# /proc/PID/status SECONDS after start: VmRSS, RssAnon (heap, stacks) and RssFile (the binary's
# mapped pages). config/local.yaml listens on 127.0.0.1:4317, 4318 and 8790: nothing else may.
#
# With cpu_seconds > 0 it then also prints the clock ticks (utime + stime, getconf CLK_TCK a
# second) the idle collector used over that many more seconds.
#
# Usage: scripts/idle-rss.sh [times, default 3] [seconds, default 6] [cpu_seconds, default 0]
set -euo pipefail
cd "$(dirname "$0")/.."
times=${1:-3} wait=${2:-6} cpu_wait=${3:-0}
export CGO_ENABLED=0 # as ocb and the benchmark build it
work=$(mktemp -d)
pid=""
trap '[ -z "$pid" ] || kill "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT
go build -trimpath -ldflags='-s -w' -o "$work/built" ./cmd/reprise
cp "$work/built" "$work/reprise" # a copy, as an installed binary runs (see docs/benchmarks.md)
config=$PWD/config/local.yaml
for i in $(seq 1 "$times"); do
  rm -rf "$work/run" && mkdir "$work/run"
  (cd "$work/run" && exec env GOMEMLIMIT=192MiB "$work/reprise" --config "$config" >log 2>&1) &
  pid=$!
  sleep "$wait"
  if ! kill -0 "$pid" 2>/dev/null; then echo "the collector exited:" >&2; cat "$work/run/log" >&2; exit 1; fi
  echo "run $i: $(awk '/^(VmRSS|RssAnon|RssFile):/ {printf "%s %d MiB  ", $1, $2/1024}' "/proc/$pid/status")"
  if (( cpu_wait > 0 )); then
    t0=$(awk '{print $14 + $15}' "/proc/$pid/stat")
    sleep "$cpu_wait"
    echo "run $i: $(( $(awk '{print $14 + $15}' "/proc/$pid/stat") - t0 )) clock ticks of CPU in $cpu_wait s idle ($(getconf CLK_TCK) a second)"
  fi
  kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""
done
