#!/usr/bin/env bash
# Watches the reprise collectors scripts/bench-pipeline.sh starts and keeps, for each in turn,
# its peak resident memory per mapping (from /proc/PID/smaps: the binary, the write-ahead
# storage's memory-mapped file, anonymous memory) and a copy of its log, so that a run with
# GODEBUG=gctrace=1 keeps the garbage collector's trace (the benchmark deletes its directory).
#
# Usage, in one shell:
#   scripts/bench-watch.sh /tmp/bench-watch & GODEBUG=gctrace=1 scripts/bench-pipeline.sh 5000 1
# Then DIR/N-rss.txt (kB per mapping, largest first) and DIR/N.log, N = 1, 2, … in start order
# (with one round: 1 = burst, 2 = paced).
set -euo pipefail
dir=${1:?usage: scripts/bench-watch.sh DIR}
mkdir -p "$dir"
n=0
# Wait for the benchmark to start, then follow it until it ends.
for _ in $(seq 600); do pgrep -f 'scripts/bench-pipeline.sh' >/dev/null && break; sleep 0.1; done
while pgrep -f 'scripts/bench-pipeline.sh' >/dev/null; do
  pid=$(pgrep -f 'bin-reprise --config' | head -1 || true)
  if [ -z "$pid" ]; then sleep 0.05; continue; fi
  n=$((n + 1))
  log=$(readlink "/proc/$pid/fd/1" || true)
  declare -A peak=()
  while [ -e "/proc/$pid/smaps" ]; do
    while read -r kb name; do
      (( kb > ${peak[$name]:-0} )) && peak[$name]=$kb
    done < <(awk '/^[0-9a-f]+-[0-9a-f]+ / {name = ($6 == "" ? "[anon]" : $6)} /^Rss:/ {s[name] += $2} END {for (k in s) print s[k], k}' "/proc/$pid/smaps" 2>/dev/null || true)
    [ -n "$log" ] && cp "$log" "$dir/$n.log" 2>/dev/null || true
    sleep 0.2
  done
  for k in "${!peak[@]}"; do echo "${peak[$k]} $k"; done | sort -rn > "$dir/$n-rss.txt"
  unset peak
done
