package testdataset

import (
	"errors"
	"io"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/require"
)

// DataPages counts the data pages of one column in the Parquet file at path, the file's row
// groups together: those whose values are indexes into the chunk's dictionary, and those that
// hold their values (PLAIN).
func DataPages(t testing.TB, path string, column ...string) (dictionary, plain int) {
	t.Helper()
	pf := OpenParquet(t, path)
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
