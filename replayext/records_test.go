package replayext

import (
	"cmp"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Values keep their numbers and contents across chunks, and adding never moves a value.
func TestRecordsAcrossChunks(t *testing.T) {
	r := newRecords[caseEntry]()
	require.NoError(t, r.reserve(1))
	first := r.at(r.add(caseEntry{pos: 0}))
	const n = 2*recordsPerChunk + 10
	require.NoError(t, r.reserve(n-1)) // room for the rest: chunks are added, none moves
	for i := 1; i < n; i++ {
		require.Equal(t, uint32(i), r.add(caseEntry{pos: uint32(i), start: int64(-i)}))
	}
	assert.Equal(t, n, r.len())
	for _, i := range []uint32{0, recordsPerChunk - 1, recordsPerChunk, 2 * recordsPerChunk, n - 1} {
		assert.Equal(t, i, r.at(i).pos)
		assert.Equal(t, -int64(i), r.at(i).start)
	}
	assert.Same(t, first, r.at(0), "values do not move")
	runtime.KeepAlive(r)
}

// sortBy orders numbers as compare does, whatever the ties of key, and merge keeps that order.
func TestSortByAndMerge(t *testing.T) {
	values := make([]int, 5000)
	for i := range values {
		values[i] = rand.IntN(300) // many ties
	}
	compare := func(a, b uint32) int {
		if c := cmp.Compare(values[a], values[b]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	}
	key := func(n uint32) uint64 { return uint64(values[n] / 7) } // coarser than compare, in its order
	var old, fresh []uint32
	for i := range uint32(len(values)) {
		if i%3 == 0 {
			old = append(old, i)
		} else {
			fresh = append(fresh, i)
		}
	}
	sortBy(old, key, compare)
	sortBy(fresh, key, compare)
	assert.True(t, slices.IsSortedFunc(old, compare))
	assert.True(t, slices.IsSortedFunc(fresh, compare))
	merged, err := merge(old, fresh, compare)
	require.NoError(t, err)
	assert.Len(t, merged, len(values))
	assert.True(t, slices.IsSortedFunc(merged, compare))
	freeNumbers(merged)
	merged, err = merge(nil, nil, compare)
	require.NoError(t, err)
	assert.Empty(t, merged)
}

// A model call's case is found from the entries' first call numbers, cases without model
// calls (and several in a row) included.
func TestEntryOfLLM(t *testing.T) {
	s := newStore(t.TempDir(), 1)
	calls := []int{0, 2, 0, 0, 1, 3, 0}
	var want []uint32 // the entry of each llm number
	require.NoError(t, s.entries.reserve(len(calls)))
	require.NoError(t, s.llms.reserve(6))
	for n, k := range calls {
		s.entries.add(caseEntry{llmStart: uint32(s.llms.len())})
		for range k {
			s.llms.add(llmRef{})
			want = append(want, uint32(n))
		}
	}
	for l, n := range want {
		assert.Equal(t, n, s.entryOfLLM(uint32(l)), "llm %d", l)
	}
}
