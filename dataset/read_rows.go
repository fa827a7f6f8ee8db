package dataset

import (
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/parquet-go/parquet-go"

	"github.com/reprise-dev/reprise/replaycase"
)

// ReadRows reads several rows of one cases/ or quarantine/ file in one pass: the file and its
// footer are opened once, and rows that follow each other are read without seeking. A listing
// page reads its cases this way; ReadCase, one row per open, serves single lookups. Raw spans
// and events are left out: whoever serves cases does not serve them.
func ReadRows(path string, rows []int64) (map[int64]*replaycase.Case, error) {
	f, pf, err := open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readRows(pf, path, rows)
}

// readRows reads rows of an open cases/ or quarantine/ file; path names it in errors.
func readRows(pf *parquet.File, path string, rows []int64) (map[int64]*replaycase.Case, error) {
	out, err := readRowsOf[CaseRow](pf, path, rows)
	fillSpanIDsOf(pf, out)
	for _, c := range out {
		c.RawSpans, c.RawEvents = nil, nil
	}
	return out, err
}

// readRowsOf reads rows of an open file as T, whose columns may be a projection of the file's.
func readRowsOf[T any](pf *parquet.File, path string, rows []int64) (map[int64]*T, error) {
	r := parquet.NewGenericReader[T](pf)
	defer r.Close()
	rows = slices.Clone(rows)
	slices.Sort(rows)
	out := make(map[int64]*T, len(rows))
	next := int64(-1) // the row the reader is at
	buf := make([]T, 1)
	for _, row := range slices.Compact(rows) {
		if row != next {
			if err := r.SeekToRow(row); err != nil {
				return nil, fmt.Errorf("%s: row %d: %w", path, row, err)
			}
		}
		if n, err := r.Read(buf); n != 1 {
			if err == nil || errors.Is(err, io.EOF) {
				err = fmt.Errorf("the file has %d rows", pf.NumRows())
			}
			return nil, fmt.Errorf("%s: row %d: %w", path, row, err)
		}
		c := buf[0]
		out[row] = &c
		var zero T
		buf[0] = zero
		next = row + 1
	}
	return out, nil
}
