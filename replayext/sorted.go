package replayext

import (
	"cmp"
	"slices"
)

// The index's lookup slices hold record numbers sorted by what the records hold. A refresh
// sorts the numbers it added and merges them into the slice: one pass over what is there.

// sortBy sorts record numbers by compare, whose order must agree with the order of key
// (ties of key are decided by compare). Comparing numbers held side by side is what makes
// the sort of a million records fast; compare reaches into the records only on ties.
func sortBy(ns []uint32, key func(uint32) uint64, compare func(a, b uint32) int) {
	type keyed struct {
		key uint64
		n   uint32
	}
	ks := make([]keyed, len(ns))
	for i, n := range ns {
		ks[i] = keyed{key(n), n}
	}
	slices.SortFunc(ks, func(a, b keyed) int {
		if c := cmp.Compare(a.key, b.key); c != 0 {
			return c
		}
		return compare(a.n, b.n)
	})
	for i := range ks {
		ns[i] = ks[i].n
	}
}

// merge returns the sorted numbers of old and fresh, both sorted by compare, in a new slice
// outside the heap (lookups may still be reading old).
func merge(old, fresh []uint32, compare func(a, b uint32) int) ([]uint32, error) {
	out, err := numbers(len(old) + len(fresh))
	if err != nil {
		return nil, err
	}
	out = out[:0]
	i, j := 0, 0
	for i < len(old) && j < len(fresh) {
		if compare(fresh[j], old[i]) < 0 {
			out = append(out, fresh[j])
			j++
		} else {
			out = append(out, old[i])
			i++
		}
	}
	out = append(out, old[i:]...)
	return append(out, fresh[j:]...), nil
}

// without returns the numbers of ns that drop does not select, in a new slice outside the heap.
func without(ns []uint32, drop func(uint32) bool) ([]uint32, error) {
	out, err := numbers(len(ns))
	if err != nil {
		return nil, err
	}
	out = out[:0]
	for _, n := range ns {
		if !drop(n) {
			out = append(out, n)
		}
	}
	return out, nil
}
