package dataset_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	. "github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/internal/testdataset"
)

// A file whose footer is sound but one of whose pages is corrupt opens, and fails where its
// rows are decoded, the same way at every read: that error wraps ErrUnreadable and names the
// file, as an unreadable footer's does, so that a reader can set the file aside. The rows read
// before the read that reaches the corrupt page are read.
func TestCorruptPageIsUnreadable(t *testing.T) {
	for _, tc := range []struct {
		name        string
		compression string
		how         testdataset.Corruption
		column      string
	}{
		{"a page header that does not decode", "zstd", testdataset.PageHeaderGarbage, "case_id"},
		{"a wrong page size", "zstd", testdataset.PageSizeWrong, "case_id"},
		{"a checksum that does not match", "zstd", testdataset.PageBodyBadCRC, "start_time"},
		{"bad compressed bytes", "zstd", testdataset.PageBodyBadBytes, "status"},
		{"values that do not decode", "none", testdataset.PageBodyBadBytes, "case_id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := t.TempDir()
			w, err := NewWriter(WriterConfig{
				Root: filepath.Join(base, "data"), Staging: filepath.Join(base, "data.staging"),
				Compression: tc.compression, MaxRowsPerFile: 100, RowGroupRows: 10,
			})
			require.NoError(t, err)
			res, err := w.Write(manyCases(t)) // 25 rows: row groups of 10, 10 and 5
			require.NoError(t, err)
			path := res.Files[0].Path
			testdataset.CorruptPage(t, path, 1, tc.how, tc.column)

			var rows []int64
			err = ScanCases(path, 0, 5, func(row int64, _ *CaseRow) error {
				rows = append(rows, row)
				return nil
			})
			assert.ErrorIs(t, err, ErrUnreadable)
			assert.ErrorContains(t, err, path)
			// parquet-go fails the whole read that reaches the corrupt row group: rows 5 to 9,
			// read with row 10, are not returned.
			assert.Equal(t, []int64{0, 1, 2, 3, 4}, rows, "the reads before the corrupt row group")

			_, err = ReadCases(path)
			assert.ErrorIs(t, err, ErrUnreadable)
			assert.ErrorContains(t, err, path)
			_, err = ReadCase(path, 12)
			assert.ErrorIs(t, err, ErrUnreadable)
			err = ScanReplayIndex(path, func(int64, *ReplayIndexRow) error { return nil })
			assert.ErrorIs(t, err, ErrUnreadable, "the replay index's scan")
			assert.ErrorContains(t, err, path)
		})
	}
}

// A file with a corrupt page in a column the index does not read is read by ReadIndex; one in
// case_id is not.
func TestCorruptPageReadIndex(t *testing.T) {
	w := newWriter(t)
	res, err := w.Write(manyCases(t))
	require.NoError(t, err)
	path := res.Files[0].Path
	good, err := os.ReadFile(path)
	require.NoError(t, err)
	testdataset.CorruptPage(t, path, 1, testdataset.PageBodyBadCRC, "case_id")
	_, err = ReadIndex(path)
	assert.ErrorIs(t, err, ErrUnreadable)
	assert.ErrorContains(t, err, path)
	require.NoError(t, os.WriteFile(path, good, 0o644))
	entries, err := ReadIndex(path)
	require.NoError(t, err)
	assert.Len(t, entries, 25)
}

// The replay index's scan tells the file's errors from its caller's: an error of fn stops the
// scan and is returned as it is, not taken for an error of the file's bytes.
func TestScanReplayIndexPassesItsCallersErrorOn(t *testing.T) {
	w := newWriter(t)
	res, err := w.Write(manyCases(t))
	require.NoError(t, err)
	stop := errors.New("the caller's")
	err = ScanReplayIndex(res.Files[0].Path, func(int64, *ReplayIndexRow) error { return stop })
	assert.ErrorIs(t, err, stop)
	assert.NotErrorIs(t, err, ErrUnreadable)
}
