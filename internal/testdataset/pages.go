package testdataset

import (
	"errors"
	"io"
	"os"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/require"
)

// DataPages counts the data pages of one column in the Parquet file at path, the file's row
// groups together: those whose values are indexes into the chunk's dictionary, and those that
// hold their values (PLAIN).
func DataPages(t testing.TB, path string, column ...string) (dictionary, plain int) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	st, err := f.Stat()
	require.NoError(t, err)
	pf, err := parquet.OpenFile(f, st.Size())
	require.NoError(t, err)
	leaf, ok := pf.Schema().Lookup(column...)
	require.True(t, ok, "%s has no column %v", path, column)
	for _, rg := range pf.RowGroups() {
		pages := rg.ColumnChunks()[leaf.ColumnIndex].Pages()
		for {
			p, err := pages.ReadPage()
			if errors.Is(err, io.EOF) {
				break
			}
			require.NoError(t, err)
			if p.Dictionary() != nil {
				dictionary++
			} else {
				plain++
			}
			parquet.Release(p)
		}
		require.NoError(t, pages.Close())
	}
	return dictionary, plain
}
