#!/usr/bin/env -S awk -f
# The summary of scripts/bench-ab.sh. Input: scripts/bench-pipeline.sh's per-run lines, each
# prefixed with the tree (A or B) and the round:
#   A 1 reprise  burst  cpu_s_per_1000_spans 0.1332 peak_rss_mib 164 ... load_seconds 1.09
# Output, per mode and metric: reprise's median in A and in B, B/A of the medians, the lowest and
# highest B/A of a round's pair, and each tree's median over its rounds of reprise / stock.
function median(list,    n, v, i, j, t) {
  n = split(list, v, " ")
  for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j - 1] + 0 > v[j] + 0; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
  return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
}
# num prints a median as the runs print their values: whole numbers whole, large ones to a
# tenth, others to 4 digits.
function num(x) { return x == int(x) ? sprintf("%d", x) : x >= 1000 ? sprintf("%.1f", x) : sprintf("%.4g", x) }
function ratio(x, y) { return y + 0 == 0 ? "-" : sprintf("%.3fx", x / y) }
{
  tree = $1; round = $2; who = $3; mode = $4
  for (f = 5; f < NF; f += 2) {
    value[tree, round, who, mode SUBSEP $f] = $(f + 1)
    nlines++
  }
  if (round > rounds) rounds = round
}
END {
  if (nlines == 0) { print "no runs to summarize" > "/dev/stderr"; exit 1 }
  nmetrics = split("cpu_s_per_1000_spans heap_alloc_mib_per_1000_spans peak_rss_mib peak_anon_rss_mib output_bytes written_mib load_seconds", metric, " ")
  split("CPU s per 1,000 spans|heap MiB allocated / 1,000 spans|peak RSS MiB|peak anonymous RSS MiB|output bytes|MiB written|clients' seconds to send", label, "|")
  nmodes = split("burst paced", modes, " ")
  printf "\nsummary of %d rounds: reprise in A and B (medians), B/A, and each tree's ratio to stock (median of rounds)\n", rounds
  printf "%-6s %-34s %12s %12s %8s %15s %10s %10s\n", "mode", "metric", "A", "B", "B/A", "B/A per round", "A/stock", "B/stock"
  for (m = 1; m <= nmodes; m++) for (k = 1; k <= nmetrics; k++) {
    key = modes[m] SUBSEP metric[k]
    as = bs = pairs = astock = bstock = ""
    for (r = 1; r <= rounds; r++) {
      av = value["A", r, "reprise", key]; bv = value["B", r, "reprise", key]
      if (av != "") as = as " " av
      if (bv != "") bs = bs " " bv
      if (av + 0 > 0 && bv != "") pairs = pairs " " bv / av
      sa = value["A", r, "stock", key]; sb = value["B", r, "stock", key]
      if (av != "" && sa + 0 > 0) astock = astock " " av / sa
      if (bv != "" && sb + 0 > 0) bstock = bstock " " bv / sb
    }
    if (as == "" || bs == "") continue
    am = median(as); bm = median(bs)
    lo = hi = ""
    n = split(pairs, p, " ")
    for (i = 1; i <= n; i++) { if (lo == "" || p[i] + 0 < lo) lo = p[i] + 0; if (hi == "" || p[i] + 0 > hi) hi = p[i] + 0 }
    printf "%-6s %-34s %12s %12s %8s %15s %10s %10s\n", modes[m], label[k], num(am), num(bm), ratio(bm, am),
      (n ? sprintf("%.3f-%.3fx", lo, hi) : "-"),
      (astock == "" ? "-" : sprintf("%.2fx", median(astock))), (bstock == "" ? "-" : sprintf("%.2fx", median(bstock)))
  }
}
