package testdataset

import (
	"os"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/require"
)

// OpenParquet opens the Parquet file at path with parquet-go, as a notebook would, for the
// length of the test.
func OpenParquet(t testing.TB, path string) *parquet.File {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	info, err := f.Stat()
	require.NoError(t, err)
	pf, err := parquet.OpenFile(f, info.Size())
	require.NoError(t, err)
	return pf
}
