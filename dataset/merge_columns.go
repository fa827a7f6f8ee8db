package dataset

import (
	"errors"
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go"
)

// Merging column by column.
//
// A merge copies the rows of segment files into the final file. Reading them as rows
// (parquet.Rows) assembles every row from ~240 columns only for the writer to take it apart
// into the same columns again: that round trip was most of a merge's CPU and allocations.
// Segments and the final file have the same schema, so the merge copies each column's values
// straight from the segment's pages into the final file's column writer instead; the writer
// still encodes, compresses, and computes statistics, page indexes and the bloom filter as it
// does for rows. Row group and file boundaries are chosen here, by rows, so a segment's row
// group can be split across two of them. steps/ is written the same way from the columns of
// cases/ segments (merge_steps.go).

// columnMerge writes the rows of source row groups into the final files of one dataset and
// day.
type columnMerge struct {
	w           *Writer
	b           *batch
	dataset, dt string
	opts        []parquet.WriterOption
	schema      *parquet.Schema // the final schema; every source must have it

	// zeroNulls, set while a segment written with GenericWriter.Write is read, restores the
	// NULLs that Write stored as zero values (segment_nulls.go), as each page is read.
	zeroNulls *zeroNulls

	out       *stagedFile
	groupRows int             // rows in out's row group not flushed yet
	values    []parquet.Value // one page's values, reused
	derived   []parquet.Value // the steps/ values made of them (merge_steps.go), reused
}

// copyRowGroup copies all rows of rg.
func (m *columnMerge) copyRowGroup(rg parquet.RowGroup) error {
	if !parquet.EqualNodes(rg.Schema(), m.schema) {
		return errors.New("segment schema differs from the dataset's schema")
	}
	chunks := rg.ColumnChunks()
	return m.writeRows(rg.NumRows(), func(i int, dst *parquet.ColumnWriter, lo, hi int64, whole bool) error {
		return m.copyColumn(dst, chunks[i], nil, lo, hi, whole)
	})
}

// writeRows writes n rows, cutting row groups at RowGroupRows (or when the buffered row group
// reaches mergeRowGroupBytes, checked after each call, so a row group may pass it by at most
// n rows) and files at MaxRowsPerFile. column writes rows [lo, hi) of column i to dst; whole
// says they are all n rows.
func (m *columnMerge) writeRows(n int64, column func(i int, dst *parquet.ColumnWriter, lo, hi int64, whole bool) error) error {
	for lo := int64(0); lo < n; {
		if err := m.start(); err != nil {
			return err
		}
		k := min(n-lo, int64(m.w.cfg.RowGroupRows-m.groupRows), int64(m.w.cfg.MaxRowsPerFile-m.out.rows))
		for i, dst := range m.out.pw.ColumnWriters() {
			if err := column(i, dst, lo, lo+k, lo == 0 && k == n); err != nil {
				return fmt.Errorf("column %d: %w", i, err)
			}
		}
		lo += k
		m.out.rows += int(k)
		m.groupRows += int(k)
		// Size is what is written plus the row group buffered, uncompressed.
		if m.groupRows == m.w.cfg.RowGroupRows || m.out.pw.Size()-m.out.cw.n >= mergeRowGroupBytes {
			if err := m.out.pw.Flush(); err != nil {
				return err
			}
			m.groupRows = 0
		}
		if m.out.rows == m.w.cfg.MaxRowsPerFile {
			if err := m.finish(); err != nil {
				return err
			}
		}
	}
	return nil
}

// start creates the next file when none is open.
func (m *columnMerge) start() error {
	if m.out != nil {
		return nil
	}
	f, err := m.w.createStaged(m.b, m.dataset, m.dt)
	if err != nil {
		return err
	}
	pw := parquet.NewGenericWriter[any](f.cw, m.opts...)
	f.pw, f.closeParquet = pw, pw.Close
	m.out, m.groupRows = f, 0
	return nil
}

// finish completes the open file, if any.
func (m *columnMerge) finish() error {
	if m.out == nil {
		return nil
	}
	err := m.out.finish(m.b)
	m.out = nil
	return err
}

// abort drops the open file, if any; it goes with its batch directory.
func (m *columnMerge) abort() {
	if m.out != nil {
		m.out.abort()
		m.out = nil
	}
}

// copyColumn writes the values of rows [lo, hi) of one column chunk to dst, a page at a time,
// each page's values through transform unless it is nil (rows are counted after it); whole
// says they are all its rows, which need not be counted then. A page holds whole rows (a
// row starts at repetition level 0), and so does every write to dst: the column writer may
// cut a page after any write, and a row must not span two pages.
func (m *columnMerge) copyColumn(dst *parquet.ColumnWriter, chunk parquet.ColumnChunk, transform func([]parquet.Value) []parquet.Value, lo, hi int64, whole bool) error {
	row := int64(-1) // the row of the last value read
	err := m.eachPage(chunk, func(values []parquet.Value) (bool, error) {
		if transform != nil {
			values = transform(values)
		}
		if !whole {
			values = rowsOf(values, &row, lo, hi)
		}
		if len(values) > 0 {
			if _, err := dst.WriteRowValues(values); err != nil {
				return false, err
			}
		}
		return whole || row < hi-1, nil // the page is released next: the column writer copied what it keeps
	})
	if err == nil && !whole && row < hi-1 {
		return fmt.Errorf("%d rows, want %d", row+1, hi)
	}
	return err
}

// eachPage calls fn with the values of each page of chunk (read by readPage), until fn says
// there is no more to read or fails. The page is released when fn returns.
func (m *columnMerge) eachPage(chunk parquet.ColumnChunk, fn func([]parquet.Value) (more bool, err error)) error {
	pages := chunk.Pages()
	defer pages.Close()
	for {
		page, err := pages.ReadPage()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		values, err := m.readPage(page)
		more := false
		if err == nil {
			more, err = fn(values)
		}
		parquet.Release(page)
		if err != nil || !more {
			return err
		}
	}
}

// readPage reads every value of a page into m.values, with the NULLs of a segment written with
// Write restored.
func (m *columnMerge) readPage(page parquet.Page) ([]parquet.Value, error) {
	n := int(page.NumValues())
	if cap(m.values) < n {
		m.values = make([]parquet.Value, n)
	}
	values := m.values[:n]
	r := page.Values()
	for read := 0; read < n; {
		k, err := r.ReadValues(values[read:])
		read += k
		if errors.Is(err, io.EOF) && read < n {
			return nil, fmt.Errorf("page holds %d values, %d read", n, read)
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
		if k == 0 && err == nil {
			return nil, io.ErrNoProgress
		}
	}
	if m.zeroNulls != nil {
		m.zeroNulls.restoreNulls(values, page.Column())
	}
	return values, nil
}

// rowsOf is the part of a page's values that belongs to rows [lo, hi); *row is the row of the
// value before the page, and is advanced to the row of its last value (or to hi-1 when the
// page goes past hi).
func rowsOf(values []parquet.Value, row *int64, lo, hi int64) []parquet.Value {
	first := *row + 1
	var rows int64
	for _, v := range values {
		if v.RepetitionLevel() == 0 {
			rows++
		}
	}
	if first >= lo && first+rows <= hi { // the whole page: the common case
		*row += rows
		return values
	}
	start, end := 0, len(values)
	if first < lo {
		start = len(values)
	}
	for i, v := range values {
		if v.RepetitionLevel() != 0 {
			continue
		}
		*row++
		if *row == lo {
			start = i
		}
		if *row == hi {
			*row = hi - 1
			end = i
			break
		}
	}
	if start >= end {
		return nil
	}
	return values[start:end]
}

// schemaOf is the schema among writer options (every option list of this package has one).
func schemaOf(opts []parquet.WriterOption) *parquet.Schema {
	for _, o := range opts {
		if s, ok := o.(*parquet.Schema); ok {
			return s
		}
	}
	return nil
}
