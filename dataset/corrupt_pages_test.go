package dataset_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	. "github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/internal/testdataset"
	"github.com/reprise-dev/reprise/replaycase"
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
			// Each row group is read on its own: the read of rows 5 to 9 ends with its row
			// group, and does not reach the corrupt one.
			assert.Equal(t, []int64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, rows, "the row group before the corrupt one")

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

// ScanReadableCases reads past a corrupt page: of a file of three row groups whose middle one
// has a corrupt page (not its first) in one column, it returns every row of the other row
// groups and of the middle one's other pages, and reports the rows it cannot read as one
// range: the page's rows, and the row before them, whose end a row reader finds only in that
// page (it reads on to see that the next value starts a row). It returns the range's error at
// the end, so that the file can still be set aside.
func TestScanReadableCasesAroundACorruptPage(t *testing.T) {
	for _, tc := range []struct {
		name string
		how  testdataset.Corruption
	}{
		{"a page header that does not decode", testdataset.PageHeaderGarbage},
		{"a wrong page size", testdataset.PageSizeWrong},
		{"a checksum that does not match", testdataset.PageBodyBadCRC},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := threeRowGroupsOfSeveralPages(t)
			pf := testdataset.OpenParquet(t, path)
			leaf, _ := pf.Schema().Lookup("raw_spans")
			index, err := pf.RowGroups()[1].ColumnChunks()[leaf.ColumnIndex].OffsetIndex()
			require.NoError(t, err)
			require.Greater(t, index.NumPages(), 2, "raw_spans has several pages in a row group")
			testdataset.CorruptNthPage(t, path, 1, 1, tc.how, "raw_spans")
			first := pf.RowGroups()[0].NumRows() // of the middle row group
			lostFrom, lostTo := first+index.FirstRowIndex(1)-1, first+index.FirstRowIndex(2)

			var rows, want []int64
			var lost [][2]int64
			err = ScanReadableCases(path, 0, 10, func(row int64, c *CaseRow) error {
				require.Equal(t, fmt.Sprintf("case-%03d", row), c.CaseID)
				rows = append(rows, row)
				return nil
			}, func(from, to int64, err error) {
				assert.ErrorIs(t, err, ErrUnreadable)
				lost = append(lost, [2]int64{from, to})
			})
			assert.ErrorIs(t, err, ErrUnreadable)
			assert.ErrorContains(t, err, path)
			assert.Equal(t, [][2]int64{{lostFrom, lostTo}}, lost)
			for row := range pf.NumRows() {
				if row < lostFrom || row >= lostTo {
					want = append(want, row)
				}
			}
			assert.Equal(t, want, rows, "every row but those lost, in order")

			// From a row after the corrupt page, nothing is lost.
			rows, lost = nil, nil
			require.NoError(t, ScanReadableCases(path, lostTo, 10, func(row int64, _ *CaseRow) error {
				rows = append(rows, row)
				return nil
			}, func(from, to int64, _ error) { lost = append(lost, [2]int64{from, to}) }))
			assert.Equal(t, want[len(want)-len(rows):], rows)
			assert.Empty(t, lost)
		})
	}
}

// threeRowGroupsOfSeveralPages writes a data file of 300 rows, in row groups of 100, whose
// raw_spans (4000 random bytes a row, which do not compress) take several pages a row group.
func threeRowGroupsOfSeveralPages(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	w, err := NewWriter(WriterConfig{
		Root: filepath.Join(dir, "data"), Staging: filepath.Join(dir, "data.staging"),
		Compression: "zstd", MaxRowsPerFile: 1000, RowGroupRows: 100,
	})
	require.NoError(t, err)
	random := rand.New(rand.NewPCG(1, 2))
	base := fixtureCases(t)[2]
	cases := make([]*replaycase.Case, 300)
	for i := range cases {
		c := *base
		c.CaseID = fmt.Sprintf("case-%03d", i)
		c.RawSpans = make([]byte, 4000)
		for j := range c.RawSpans {
			c.RawSpans[j] = byte(random.Uint32())
		}
		cases[i] = &c
	}
	res, err := w.Write(cases)
	require.NoError(t, err)
	require.Len(t, res.Files, 1)
	return res.Files[0].Path
}
