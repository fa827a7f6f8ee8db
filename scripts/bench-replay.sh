#!/usr/bin/env bash
# Load test of the replay extension's OpenAI endpoint against a static handler that serves the
# same response bytes, both on loopback, with wrk (Debian package `wrk`). For each connection
# count it measures the two side by side in one run (replay, static, replay, static) and prints
# the ratio of their throughputs.
# Usage: scripts/bench-replay.sh [duration per measurement, default 10s] [connection counts, default "1 4 32"]
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${1:-10s}
conn_counts=${2:-1 4 32}
command -v wrk >/dev/null || { echo "install wrk (apt-get install wrk)" >&2; exit 1; }
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
go build -o "$work/reprise" ./cmd/reprise
go build -o "$work/static" ./scripts/benchstatic

cat > "$work/config.yaml" <<YAML
extensions:
  replay: {endpoint: 127.0.0.1:18790, directory: $work/data, refresh_interval: 200ms}
receivers:
  otlp: {protocols: {http: {endpoint: 127.0.0.1:14318}}}
processors:
  replay_case: {root_grace_period: 200ms}
exporters:
  replay_parquet: {directory: $work/data, sending_queue: {batch: {flush_timeout: 200ms}}}
  nop: {}
service:
  extensions: [replay]
  telemetry: {metrics: {level: none}, logs: {level: warn}}
  pipelines:
    traces: {receivers: [otlp], processors: [replay_case], exporters: [replay_parquet]}
    logs: {receivers: [otlp], processors: [replay_case], exporters: [nop]}
YAML
"$work/reprise" --config "$work/config.yaml" > "$work/collector.log" 2>&1 &
until curl -sf http://127.0.0.1:18790/v1/cases >/dev/null; do sleep 0.2; done
curl -sf -H 'Content-Type: application/json' --data @testdata/otlp/otel-events/logs.json http://127.0.0.1:14318/v1/logs >/dev/null
curl -sf -H 'Content-Type: application/json' --data @testdata/otlp/otel-events/traces.json http://127.0.0.1:14318/v1/traces >/dev/null
until [ -n "$(curl -sf 'http://127.0.0.1:18790/v1/cases?status=accepted' | sed -n 's/.*"case_id":"\([0-9a-f]*\)".*/\1/p')" ]; do sleep 0.2; done
case_id=$(curl -sf 'http://127.0.0.1:18790/v1/cases?status=accepted' | sed -n 's/.*"case_id":"\([0-9a-f]*\)".*/\1/p')

# The first request the agent's OpenAI SDK sent in that run.
cp testdata/requests/weather-first-call.json "$work/request.json"
url=http://127.0.0.1:18790/v1/cases/$case_id/openai/v1/chat/completions
curl -sf -H 'Content-Type: application/json' --data @"$work/request.json" "$url" > "$work/response.json"
"$work/static" -addr 127.0.0.1:18791 -body "$work/response.json" &
until curl -sf -X POST http://127.0.0.1:18791/ >/dev/null; do sleep 0.1; done

body=$(sed 's/\\/\\\\/g; s/"/\\"/g' "$work/request.json" | tr -d '\n')
cat > "$work/post.lua" <<LUA
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = "$body"
LUA
# measure NAME URL CONNS: one wrk run; prints "rps p50 p99 non2xx".
measure() {
  local threads=$(( $3 < 2 ? $3 : 2 )) # wrk needs at least one connection per thread
  local out
  out=$(wrk -t"$threads" -c"$3" -d"$duration" --latency -s "$work/post.lua" "$2")
  echo "$(echo "$out" | awk '/Requests\/sec/ {print $2}') $(echo "$out" | awk '$1 == "50%" {print $2}') $(echo "$out" | awk '$1 == "99%" {print $2}') $(echo "$out" | awk '/Non-2xx/ {print $NF}')"
}
echo "response: $(wc -c < "$work/response.json") bytes; wrk --latency, $duration per run, two runs each, alternating"
printf '%-5s %-8s %12s %10s %10s %8s\n' conns target "requests/s" p50 p99 non-2xx
for conns in $conn_counts; do
  declare -A sum=()
  for round in 1 2; do
    for target in "replay $url" "static http://127.0.0.1:18791/"; do
      set -- $target
      read -r rps p50 p99 non2xx <<< "$(measure "$1" "$2" "$conns")"
      printf '%-5s %-8s %12s %10s %10s %8s\n' "$conns" "$1" "$rps" "$p50" "$p99" "${non2xx:-0}"
      sum[$1]=$(echo "${sum[$1]:-0} + $rps" | bc)
    done
  done
  printf '%-5s ratio replay/static: %.2f\n' "$conns" "$(echo "${sum[replay]} / ${sum[static]}" | bc -l)"
done
