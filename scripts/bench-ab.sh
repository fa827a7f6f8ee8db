#!/usr/bin/env bash
# Two trees side by side: scripts/bench-pipeline.sh RUNS 1 in TREE_A, then in TREE_B, ROUNDS
# times, so that both meet the same machine (it is shared and noisy; compare ratios and pairs,
# not seconds from different hours). Each run's per-collector lines are printed with the tree,
# then a summary: per metric, reprise's median in each tree, B/A of the medians and of each
# round's pair (the two runs of a round ran minutes apart), and each tree's median ratio to the
# stock collector of its own runs.
# Make TREE_B with: git worktree add /tmp/ab-b <commit>
#
# Usage: scripts/bench-ab.sh TREE_A TREE_B [rounds, default 3] [runs, default 5000]
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 TREE_A TREE_B [rounds] [runs]" >&2; exit 2; }
a=$1 b=$2 rounds=${3:-3} runs=${4:-5000}
lines=$(mktemp)
trap 'rm -f "$lines"' EXIT
for i in $(seq 1 "$rounds"); do
  for tree in "$a" "$b"; do
    echo "=== $tree, round $i of $rounds, $(date -u +%T) UTC, load average $(cut -d' ' -f1 /proc/loadavg)"
    label=A; [ "$tree" = "$a" ] || label=B
    out=$(cd "$tree" && scripts/bench-pipeline.sh "$runs" 1 | grep -E '^(reprise|stock) ')
    echo "$out"
    sed "s/^/$label $i /" <<<"$out" >>"$lines"
  done
done
awk -f "$(dirname "$0")/bench-ab-summary.awk" "$lines"
