package dataset

import (
	"errors"
	"fmt"
	"io"
)

// ScanCases calls fn for each row of a cases/ or quarantine/ file from row `from` on, in file
// order, decoding rowsPerRead rows at a time: memory holds at most that many cases, and a
// file already read to the end costs only its footer. fn may keep the case (each read
// decodes into fresh memory). An error from fn stops the scan and is returned.
func ScanCases(path string, from int64, rowsPerRead int, fn func(row int64, c *CaseRow) error) error {
	f, df, err := open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return scanCases(df, path, from, rowsPerRead, fn)
}

// scanCases scans an open cases/ or quarantine/ file; path names it in errors.
func scanCases(df dataFile, path string, from int64, rowsPerRead int, fn func(row int64, c *CaseRow) error) error {
	pf := df.pf
	if from >= pf.NumRows() {
		return nil
	}
	r := newRowReader[CaseRow](df)
	defer r.Close()
	if err := r.SeekToRow(from); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	row := from
	for {
		// No more rows than the file has left: rowsPerRead bounds a read, and a large one (the
		// receiver's batch_size) over a small file would allocate its whole size.
		buf := make([]CaseRow, max(min(int64(rowsPerRead), pf.NumRows()-row), 1))
		n, err := r.Read(buf)
		restoreRows(pf, buf[:n])
		for i := range buf[:n] {
			if ferr := fn(row, &buf[i]); ferr != nil {
				return ferr
			}
			row++
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: reading row %d: %w", path, row, err)
		}
	}
}
