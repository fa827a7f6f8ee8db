package replayext

import (
	"errors"
	"fmt"
	"runtime"
)

// records is an append-only sequence of fixed-size values without pointers, numbered from 0,
// kept in chunks outside the Go heap where the platform allows (records_unix.go).
//
// The index of a million cases is tens of megabytes of such values. On the Go heap they would
// count toward the garbage collector's target, which lets the heap grow to twice what is live
// before collecting: the process would peak near twice the index. Outside the heap they cost
// their own size and nothing more, and the collector neither scans nor counts them. Chunks
// never move, so a value's address is stable, and the memory is returned when the records
// become unreachable. T must not contain pointers (strings, slices, maps): the garbage
// collector does not see what chunks point to.
type records[T any] struct {
	chunks *chunkList[T]
	n      int
}

// chunkList is the chunks of a records, apart from it so that a cleanup can free them once
// the records are unreachable.
type chunkList[T any] struct{ chunks [][]T }

// recordsPerChunk is a power of two: 65,536 values, 2.5 MiB of 40-byte entries. Pages of a
// chunk that are not written take no memory, so a small index costs little more than its size.
const recordsPerChunk = 1 << 16

func newRecords[T any]() *records[T] {
	r := &records[T]{chunks: &chunkList[T]{}}
	runtime.AddCleanup(r, func(l *chunkList[T]) {
		for _, c := range l.chunks {
			freeChunk(c)
		}
	}, r.chunks)
	return r
}

// reserve makes room for k more values, so that the next k adds cannot fail: a file's cases
// are added all or none. It may append to the chunk list, which `at` reads: the caller holds
// the lock under which others call at (store.mu).
func (r *records[T]) reserve(k int) error {
	for r.n+k > len(r.chunks.chunks)*recordsPerChunk {
		c, err := allocChunk[T](recordsPerChunk)
		if err != nil {
			return err
		}
		r.chunks.chunks = append(r.chunks.chunks, c)
	}
	return nil
}

// add appends v and returns its number; the caller reserved room for it.
func (r *records[T]) add(v T) uint32 {
	*r.at(uint32(r.n)) = v
	r.n++
	return uint32(r.n - 1)
}

// at is the value numbered i, in place.
func (r *records[T]) at(i uint32) *T {
	return &r.chunks.chunks[i/recordsPerChunk][i%recordsPerChunk]
}

func (r *records[T]) len() int { return r.n }

// lookups are the index's sorted slices of record numbers, outside the Go heap like records
// (a million cases make 12 MB of them). A refresh builds new slices and frees the ones they
// replace once no lookup can be reading them (lookups read them under the store's lock); the
// last ones are freed when the store is unreachable.
type lookups struct {
	byID    []uint32 // entry numbers by case id
	byCall  []uint32 // llm numbers by call-site id, then number: recorded order
	ordered []uint32 // entry numbers by start time, then case id
}

func newLookups() *lookups { return &lookups{} }

// numbers allocates n record numbers outside the heap.
func numbers(n int) ([]uint32, error) {
	if n == 0 {
		return nil, nil
	}
	return allocChunk[uint32](n)
}

// errIndexMemory is the system refusing memory for the index: the extension does not start,
// and a refresh leaves the index as it was.
var errIndexMemory = errors.New("replay index: the system refused memory for the index")

// errIndexFull is a dataset with more rows than the index numbers (about four billion); like
// errIndexMemory, the extension does not start, and a refresh leaves the index as it was.
var errIndexFull = errors.New("replay index: the dataset has more rows than the index can number")

func allocError(size int, err error) error {
	return fmt.Errorf("%w (mapping %d bytes outside the Go heap: %w)", errIndexMemory, size, err)
}

// allocFault, when set by a test, is the error of the next allocations of the index.
var allocFault func(size int) error

func checkAlloc(size int) error {
	if allocFault == nil {
		return nil
	}
	if err := allocFault(size); err != nil {
		return allocError(size, err)
	}
	return nil
}

func freeNumbers(ns []uint32) {
	if cap(ns) > 0 {
		freeChunk(ns[:cap(ns)])
	}
}

func (l *lookups) free() {
	freeNumbers(l.byID)
	freeNumbers(l.byCall)
	freeNumbers(l.ordered)
}
