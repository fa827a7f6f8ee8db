#!/usr/bin/env bash
# Two trees side by side: scripts/bench-pipeline.sh RUNS 1 in TREE_A, then in TREE_B, ROUNDS
# times, so that both meet the same machine (it is shared and noisy; compare ratios and pairs,
# not seconds from different hours). Each run's per-collector lines are printed with the tree.
# Make TREE_B with: git worktree add /tmp/ab-b <commit>
#
# Usage: scripts/bench-ab.sh TREE_A TREE_B [rounds, default 3] [runs, default 5000]
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 TREE_A TREE_B [rounds] [runs]" >&2; exit 2; }
a=$1 b=$2 rounds=${3:-3} runs=${4:-5000}
for i in $(seq 1 "$rounds"); do
  for tree in "$a" "$b"; do
    echo "=== $tree, round $i of $rounds, $(date -u +%T) UTC, load average $(cut -d' ' -f1 /proc/loadavg)"
    (cd "$tree" && scripts/bench-pipeline.sh "$runs" 1 | grep -E '^(reprise|stock) ')
  done
done
