package dataset_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	. "github.com/reprise-dev/reprise/dataset"
)

// A CaseFile reads every row as ReadCase does (raw spans and events left out), in any order
// and from any row group, and refuses rows out of range and reads after Close.
func TestCaseFileReadsEachRowAsReadCase(t *testing.T) {
	base := t.TempDir()
	w, err := NewWriter(WriterConfig{ // a row group per row: the accepted cases are in two
		Root: filepath.Join(base, "data"), Staging: filepath.Join(base, "data.staging"),
		Compression: "zstd", MaxRowsPerFile: 100, RowGroupRows: 1,
	})
	require.NoError(t, err)
	_, err = w.Write(fixtureCases(t))
	require.NoError(t, err)
	read := 0
	for _, path := range caseFiles(t, w.Root()) {
		f, err := OpenCaseFile(path)
		require.NoError(t, err)
		all, err := ReadCases(path)
		require.NoError(t, err)
		for _, row := range append([]int64{int64(len(all)) - 1, 0}, rangeRows(len(all))...) {
			got, err := f.ReadCase(row)
			require.NoError(t, err)
			want := all[row]
			want.RawSpans, want.RawEvents = nil, nil
			assert.Equal(t, &want, got, "%s row %d", path, row)
			read++
		}
		_, err = f.ReadCase(int64(len(all)))
		assert.ErrorContains(t, err, "out of range")
		require.NoError(t, f.Close())
		_, err = f.ReadCase(0)
		assert.ErrorIs(t, err, os.ErrClosed)
		assert.NoError(t, f.Close(), "closing twice")
	}
	assert.Equal(t, 3+2+2, read, "each row of the cases file (2) and the quarantine file (1), then the last and first again")
}

func rangeRows(n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = int64(i)
	}
	return out
}

// caseFiles are the cases/ and quarantine/ files under root.
func caseFiles(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	for _, ds := range []string{Cases, Quarantine} {
		files, err := filepath.Glob(filepath.Join(root, ds, "*", "*.parquet"))
		require.NoError(t, err)
		out = append(out, files...)
	}
	require.NotEmpty(t, out)
	return out
}
