package dataset

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/parquet-go/parquet-go"
)

// WriteCaseFile writes case rows as one self-contained Parquet file at path, with the same
// schema, writer profile and footer as the rows of cases/ and quarantine/ (ReadCases reads
// it back). It is the export format of `reprise export`: a file outside any dataset, written
// to a temporary name and renamed, so path never holds a partial file.
func WriteCaseFile(path, compression string, rows []CaseRow) error {
	opts, err := writerOptions(compression, max(len(rows), 1), casePageBytes, parquet.SchemaOf(CaseRow{}))
	if err != nil {
		return err
	}
	opts = withoutBounds(opts, longBoundsOf(rows))
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // after the rename there is nothing left to remove
	cw := &countingWriter{w: f}
	w := parquet.NewGenericWriter[CaseRow](cw, opts...)
	err = WriteRows(w, rows) // not w.Write(rows): see WriteRows
	if err == nil {
		err = closeWithoutUnboundedIndexes(w, w.Close, cw)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
