package dataset

import (
	"io"
	"sync"

	"github.com/parquet-go/parquet-go"
)

// idleWriters keeps, for each option set segments are written with, the parquet-go writer of
// the last segment, closed, for the next segment to Reset and reuse.
//
// A new writer builds its row writer for the Go type again by reflection (parquet-go does not
// cache it: about half of a new writer's CPU in a profile of BenchmarkSegmentSize/50) and
// allocates the buffers and encoders of every column (245 for cases/), filling them from pools
// a garbage collection empties; a sweep hands off a segment every half second,
// and between two sweeps several collections run. So every segment paid for its writer again:
// ~22 ms of CPU and ~12 MB of allocations per segment, whatever its size
// (BenchmarkSegmentSize, docs/benchmarks.md part 11), which made a paced run's segments of
// ~250 cases cost a third more per case than segments of 1,000.
//
// An idle writer holds 4–5 MiB (BenchmarkBatchMemory's held_between_batches_MiB), so a merge,
// the largest heap of a paced run, releases it first: the next segment builds one again, once
// per merge.
//
// Only writers of the fast path are kept (writeStaged, writeStagedRows with Write): their footer carries
// segmentWriterKey, which a reset keeps, so a kept writer must never write a file the merge
// must not repair. One idle writer per option set bounds what is held; concurrent batches beyond
// it make their own.
type idleWriters struct {
	mu   sync.Mutex
	idle map[*parquet.WriterOption]any // by the option set's first element: a *parquet.GenericWriter[T]
}

// writeStaged writes rows into out with a writer of opts and has finish close it (finish is
// given the writer's Close, which writes the footer). A segment on the fast path
// (writesWithWrite) is written by the idle writer of opts in iw, reset, if there is one, and
// its writer becomes that idle writer once finish has succeeded: a writer that failed is not
// reused, its state unknown. With iw nil every file gets a new writer. finished says whether
// finish was called, so that the caller knows whether the file still needs closing.
func writeStaged[T any](iw *idleWriters, out io.Writer, rows []T, opts []parquet.WriterOption, z *zeroNulls, finish func(closeParquet func() error) error) (finished bool, err error) {
	fast := writesWithWrite(z, rows)
	var pw *parquet.GenericWriter[T]
	if fast {
		pw = takeIdle[T](iw, out, opts)
	}
	if pw == nil {
		pw = parquet.NewGenericWriter[T](out, opts...)
	}
	if err := writeStagedRows(pw, rows, fast); err != nil {
		return false, err
	}
	if err := finish(pw.Close); err != nil {
		return true, err
	}
	if fast {
		iw.keep(opts, pw)
	}
	return true, nil
}

// takeIdle returns the idle writer of opts, reset to write to out, or nil if iw has none.
func takeIdle[T any](iw *idleWriters, out io.Writer, opts []parquet.WriterOption) *parquet.GenericWriter[T] {
	if iw == nil {
		return nil
	}
	iw.mu.Lock()
	pw, ok := iw.idle[&opts[0]].(*parquet.GenericWriter[T])
	if ok {
		delete(iw.idle, &opts[0])
	}
	iw.mu.Unlock()
	if !ok {
		return nil
	}
	pw.Reset(out)
	return pw
}

// keep makes pw, which has written and closed a file with opts, the idle writer of opts.
func (iw *idleWriters) keep(opts []parquet.WriterOption, pw any) {
	if iw == nil {
		return
	}
	iw.mu.Lock()
	defer iw.mu.Unlock()
	if iw.idle == nil {
		iw.idle = map[*parquet.WriterOption]any{}
	}
	iw.idle[&opts[0]] = pw
}

// release lets the idle writers go.
func (iw *idleWriters) release() {
	iw.mu.Lock()
	defer iw.mu.Unlock()
	clear(iw.idle)
}
