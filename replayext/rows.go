package replayext

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/parquet-go/parquet-go"

	"github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/replaycase"
)

// readRows reads several rows of one cases/ or quarantine/ file in one pass: the file and its
// footer are opened once, and rows that follow each other are read without seeking. A listing
// page reads its cases this way; dataset.ReadCase, one row per open, serves single lookups.
func readRows(path string, rows []int64) (map[int64]*replaycase.Case, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	pf, err := parquet.OpenFile(f, info.Size(), parquet.SkipBloomFilters(true))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if v, _ := pf.Lookup(dataset.SchemaVersionKey); v != dataset.SchemaVersion {
		return nil, fmt.Errorf("%s: footer %s is %q; this build reads %q", path, dataset.SchemaVersionKey, v, dataset.SchemaVersion)
	}
	r := parquet.NewGenericReader[dataset.CaseRow](pf)
	defer r.Close()
	rows = slices.Clone(rows)
	slices.Sort(rows)
	out := make(map[int64]*replaycase.Case, len(rows))
	next := int64(-1) // the row the reader is at
	buf := make([]dataset.CaseRow, 1)
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
		c.RawSpans, c.RawEvents = nil, nil // not served
		out[row] = &c
		buf[0] = dataset.CaseRow{}
		next = row + 1
	}
	return out, nil
}

// getMany reads several cases, from the cache or one pass per file, in the order of ids.
func (s *store) getMany(ids []string) ([]*replaycase.Case, error) {
	out := make([]*replaycase.Case, len(ids))
	type want struct {
		i   int
		row int64
	}
	byFile := map[string][]want{}
	s.mu.RLock()
	for i, id := range ids {
		if c, ok := s.cache.get(id); ok {
			out[i] = c
			continue
		}
		e, ok := s.entry(id)
		if !ok {
			s.mu.RUnlock()
			return nil, errNoCase
		}
		byFile[s.files[e.file]] = append(byFile[s.files[e.file]], want{i, int64(e.row)})
	}
	s.mu.RUnlock()
	for path, wants := range byFile {
		rows := make([]int64, len(wants))
		for j, w := range wants {
			rows[j] = w.row
		}
		read, err := readRows(path, rows)
		if err != nil {
			return nil, err
		}
		for _, w := range wants {
			out[w.i] = read[w.row]
		}
	}
	return out, nil
}
