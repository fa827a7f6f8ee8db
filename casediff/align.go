package casediff

// pair is one position of an alignment: A and B index the two sequences; -1 means the item
// exists only on the other side (a removal when B is -1, an insertion when A is -1).
type pair struct{ A, B int }

// maxAlignCells bounds the longest-common-subsequence table of one alignment (8 MiB of ints):
// two runs of thousands of tool calls each made a table of hundreds of MiB and took minutes.
// Past it, what is left after the common prefix and suffix is paired as one gap.
const maxAlignCells = 1 << 20

// align lines up two sequences so that inserted and removed items do not shift every later
// comparison: the longest common subsequence of equal items is kept in order, and inside each
// gap between two kept items the remaining items are paired in order when similar (a changed
// item), the rest being removals and insertions. The common prefix and suffix are kept first,
// so a run that is mostly its recording aligns in linear time.
func align(n, m int, equal, similar func(i, j int) bool) []pair {
	pre := 0
	for pre < n && pre < m && equal(pre, pre) {
		pre++
	}
	suf := 0
	for suf < n-pre && suf < m-pre && equal(n-1-suf, m-1-suf) {
		suf++
	}
	var out []pair
	for i := 0; i < pre; i++ {
		out = append(out, pair{i, i})
	}
	out = append(out, alignRange(pre, n-suf, pre, m-suf, equal, similar)...)
	for k := suf; k > 0; k-- {
		out = append(out, pair{n - k, m - k})
	}
	return out
}

// alignRange aligns a[i0:n] with b[j0:m].
func alignRange(i0, n, j0, m int, equal, similar func(i, j int) bool) []pair {
	var gapA, gapB []int
	if (n-i0)*(m-j0) > maxAlignCells {
		for i := i0; i < n; i++ {
			gapA = append(gapA, i)
		}
		for j := j0; j < m; j++ {
			gapB = append(gapB, j)
		}
		return pairGap(gapA, gapB, similar)
	}
	// lcs[i-i0][j-j0] is the length of the longest common subsequence of a[i:n] and b[j:m].
	lcs := make([][]int, n-i0+1)
	for i := range lcs {
		lcs[i] = make([]int, m-j0+1)
	}
	for i := n - 1; i >= i0; i-- {
		for j := m - 1; j >= j0; j-- {
			if equal(i, j) {
				lcs[i-i0][j-j0] = lcs[i-i0+1][j-j0+1] + 1
			} else {
				lcs[i-i0][j-j0] = max(lcs[i-i0+1][j-j0], lcs[i-i0][j-j0+1])
			}
		}
	}
	var out []pair
	flush := func() {
		out = append(out, pairGap(gapA, gapB, similar)...)
		gapA, gapB = gapA[:0], gapB[:0]
	}
	i, j := i0, j0
	for i < n && j < m {
		switch {
		case equal(i, j) && lcs[i-i0][j-j0] == lcs[i-i0+1][j-j0+1]+1:
			flush()
			out = append(out, pair{i, j})
			i, j = i+1, j+1
		case lcs[i-i0+1][j-j0] >= lcs[i-i0][j-j0+1]:
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
