package dataset

import (
	"errors"
	"fmt"
	"io"
)

// ScanCases calls fn for each row of a cases/ or quarantine/ file from row `from` on, in file
// order, decoding rowsPerRead rows at a time: memory holds at most that many cases, and a
// file already read to the end costs only its footer. fn may keep the case (each read
// decodes into fresh memory). An error from fn stops the scan and is returned; so does the
// first row that cannot be read (see ScanReadableCases to read past it).
func ScanCases(path string, from int64, rowsPerRead int, fn func(row int64, c *CaseRow) error) error {
	return ScanReadableCases(path, from, rowsPerRead, fn, nil)
}

// ScanReadableCases is ScanCases that reads past the rows a corrupt page makes unreadable
// (errors that wrap ErrUnreadable): it calls lost for each range of them, [from, to), in order
// with fn's rows, goes on with the rows after it, and at the end returns the first range's
// error, which wraps ErrUnreadable. With lost nil, it is ScanCases.
func ScanReadableCases(path string, from int64, rowsPerRead int, fn func(row int64, c *CaseRow) error, lost func(from, to int64, err error)) error {
	f, df, err := open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return scanCases(df, path, from, rowsPerRead, fn, lost)
}

// scanCases scans an open cases/ or quarantine/ file; path names it in errors. Each row group
// is read by its own reader, so that no read reaches into the next row group: a corrupt page
// fails the reads of rows of its own row group only.
func scanCases(df dataFile, path string, from int64, rowsPerRead int, fn func(row int64, c *CaseRow) error, lost func(from, to int64, err error)) error {
	var unreadable error // the error of the first rows lost
	first := int64(0)    // the first row of row group g
	for g, rg := range df.pf.RowGroups() {
		s := rowGroupScan{df: df, g: g, first: first, end: first + rg.NumRows(), fn: fn}
		first = s.end
		for row := max(from, s.first); row < s.end; {
			at, err := s.read(row, s.end, rowsPerRead)
			if err == nil {
				break
			}
			var stop fnError
			if errors.As(err, &stop) {
				return stop.err
			}
			if lost == nil || !errors.Is(err, ErrUnreadable) {
				return fmt.Errorf("%s: reading row %d: %w", path, at, err)
			}
			// One-row steps through the failed read pass the rows before its first
			// unreadable one to fn.
			to := min(at+int64(rowsPerRead), s.end)
			bad, err := s.read(at, to, 1)
			if err == nil {
				row = to
				continue
			}
			if errors.As(err, &stop) {
				return stop.err
			}
			if !errors.Is(err, ErrUnreadable) {
				return fmt.Errorf("%s: reading row %d: %w", path, bad, err)
			}
			resume, perr := s.pageEnd(bad)
			if perr != nil {
				return fmt.Errorf("%s: reading row %d: %w", path, bad, perr)
			}
			err = fmt.Errorf("%s: rows %d to %d: %w", path, bad, resume-1, err)
			lost(bad, resume, err)
			if unreadable == nil {
				unreadable = err
			}
			row = resume
		}
	}
	return unreadable
}

// rowGroupScan reads the rows of row group g, rows first to end of the file.
type rowGroupScan struct {
	df         dataFile
	g          int
	first, end int64
	fn         func(row int64, c *CaseRow) error
}

// fnError is an error of the scan's fn, told apart from the errors of reading.
type fnError struct{ err error }

func (e fnError) Error() string { return e.err.Error() }

// read calls fn for the rows [row, to) of the row group, rowsPerRead at a time, with a
// reader of the row group alone. It returns the row a read failed at and its error, or fn's
// error as a fnError.
func (s rowGroupScan) read(row, to int64, rowsPerRead int) (int64, error) {
	r := newRowGroupReader[CaseRow](s.df, s.g)
	defer r.Close()
	if err := r.SeekToRow(row - s.first); err != nil {
		return row, err
	}
	for row < to {
		// No more rows than are left: rowsPerRead bounds a read, and a large one (the
		// receiver's batch_size) over a small file would allocate its whole size.
		buf := make([]CaseRow, min(int64(rowsPerRead), to-row))
		n, err := r.Read(buf)
		restoreRows(s.df.pf, buf[:n])
		for i := range buf[:n] {
			if ferr := s.fn(row, &buf[i]); ferr != nil {
				return row, fnError{ferr}
			}
			row++
		}
		if errors.Is(err, io.EOF) {
			// Pages that end before the rows the footer claims: the rows after them are
			// lost, not read.
			return row, s.df.rowsRead(s.g, row-s.first)
		}
		if err != nil {
			return row, err
		}
	}
	return row, nil
}
