package casediff

// pair is one position of an alignment: A and B index the two sequences; -1 means the item
// exists only on the other side (a removal when B is -1, an insertion when A is -1).
type pair struct{ A, B int }

// align lines up two sequences so that inserted and removed items do not shift every later
// comparison: the longest common subsequence of equal items is kept in order, and inside each
// gap between two kept items the remaining items are paired in order when similar (a changed
// item), the rest being removals and insertions.
func align(n, m int, equal, similar func(i, j int) bool) []pair {
	// lcs[i][j] is the length of the longest common subsequence of a[i:] and b[j:].
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if equal(i, j) {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []pair
	var gapA, gapB []int
	flush := func() {
		out = append(out, pairGap(gapA, gapB, similar)...)
		gapA, gapB = gapA[:0], gapB[:0]
	}
	i, j := 0, 0
	for i < n && j < m {
		switch {
		case equal(i, j) && lcs[i][j] == lcs[i+1][j+1]+1:
			flush()
			out = append(out, pair{i, j})
			i, j = i+1, j+1
		case lcs[i+1][j] >= lcs[i][j+1]:
			gapA = append(gapA, i)
			i++
		default:
			gapB = append(gapB, j)
			j++
		}
	}
	for ; i < n; i++ {
		gapA = append(gapA, i)
	}
	for ; j < m; j++ {
		gapB = append(gapB, j)
	}
	flush()
	return out
}

// pairGap pairs the items of one gap: each item of a with the first similar item of b that
// comes after the previous pairing, keeping both orders.
func pairGap(a, b []int, similar func(i, j int) bool) []pair {
	var out []pair
	next := 0
	for _, i := range a {
		k := -1
		for c := next; c < len(b); c++ {
			if similar(i, b[c]) {
				k = c
				break
			}
		}
		if k < 0 {
			out = append(out, pair{i, -1})
			continue
		}
		for _, j := range b[next:k] {
			out = append(out, pair{-1, j})
		}
		out = append(out, pair{i, b[k]})
		next = k + 1
	}
	for _, j := range b[next:] {
		out = append(out, pair{-1, j})
	}
	return out
}
