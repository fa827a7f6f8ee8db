package dataset_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
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
			// The replay extension's reads of single rows, through the file it keeps open.
			cf, err := OpenCaseFile(path)
			require.NoError(t, err)
			defer cf.Close()
			_, err = cf.ReadCase(12)
			assert.ErrorIs(t, err, ErrUnreadable, "an open file's ReadCase")
			assert.ErrorContains(t, err, path)
			_, err = cf.ReadSummaries([]int64{12})
			if tc.column == "case_id" || tc.column == "status" || tc.column == "start_time" {
				assert.ErrorIs(t, err, ErrUnreadable, "an open file's ReadSummaries")
				assert.ErrorContains(t, err, path)
			}
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
		{"a page size of 1 GiB", testdataset.PageSizeGigabyte},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path, pf, index := secondPageOfRawSpansCorrupt(t, tc.how)
			first := pf.RowGroups()[0].NumRows() // of the middle row group
			lostFrom, lostTo := first+index.FirstRowIndex(1)-1, first+index.FirstRowIndex(2)

			var rows, want []int64
			var lost [][2]int64
			err := ScanReadableCases(path, 0, 10, func(row int64, c *CaseRow) error {
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

// secondPageOfRawSpansCorrupt writes threeRowGroupsOfSeveralPages and corrupts (how) the
// second page of raw_spans in its middle row group; it returns the file's path, its footer and
// that column chunk's offset index (read before).
func secondPageOfRawSpansCorrupt(t *testing.T, how testdataset.Corruption) (string, *parquet.File, parquet.OffsetIndex) {
	t.Helper()
	path := threeRowGroupsOfSeveralPages(t)
	pf := testdataset.OpenParquet(t, path)
	leaf, _ := pf.Schema().Lookup("raw_spans")
	index, err := pf.RowGroups()[1].ColumnChunks()[leaf.ColumnIndex].OffsetIndex()
	require.NoError(t, err)
	require.Greater(t, index.NumPages(), 2, "raw_spans has several pages in a row group")
	testdataset.CorruptNthPage(t, path, 1, 1, how, "raw_spans")
	return path, pf, index
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

// A footer that places a column chunk's offset index outside the file (a forged length or
// offset) makes the file unreadable, through every reader, without reading the index: parquet-go
// allocates the length the footer claims before it reads, so a negative length panicked
// (makeslice: len out of range, which stopped the collector) and a length of 1 GiB in a file of
// ~300 KiB allocated 1 GiB before the read failed. A column index placed outside the file is not
// read (it only filters pages): the file's rows are read, where a read of the page index at open
// panicked on a negative length.
func TestAFooterThatPlacesThePageIndexOutsideTheFileIsReadOrUnreadable(t *testing.T) {
	for _, tc := range []struct {
		name       string
		edit       func(*format.ColumnChunk)
		unreadable bool
	}{
		{"a negative offset index length", func(c *format.ColumnChunk) { c.OffsetIndexLength = -100 }, true},
		{"an offset index of 1 GiB", func(c *format.ColumnChunk) { c.OffsetIndexLength = 1 << 30 }, true},
		{"an offset index past the end", func(c *format.ColumnChunk) { c.OffsetIndexOffset += 1 << 40 }, true},
		{"a negative column index length", func(c *format.ColumnChunk) { c.ColumnIndexLength = -1 }, false},
		{"a column index of 1 GiB", func(c *format.ColumnChunk) { c.ColumnIndexLength = 1 << 30 }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWriter(t)
			res, err := w.Write(manyCases(t))
			require.NoError(t, err)
			path := res.Files[0].Path
			testdataset.EditFooter(t, path, func(m *format.FileMetaData) { tc.edit(&m.RowGroups[1].Columns[0]) })

			for name, read := range map[string]func() (int, error){
				"ScanReadableCases": func() (int, error) {
					n := 0
					err := ScanReadableCases(path, 0, 10, func(int64, *CaseRow) error { n++; return nil }, func(int64, int64, error) {})
					return n, err
				},
				"ReadCases": func() (int, error) { rows, err := ReadCases(path); return len(rows), err },
				"ReadIndex": func() (int, error) { rows, err := ReadIndex(path); return len(rows), err },
				"ScanReplayIndex": func() (int, error) {
					n := 0
					err := ScanReplayIndex(path, func(int64, *ReplayIndexRow) error { n++; return nil })
					return n, err
				},
				"OpenCaseFile": func() (int, error) {
					cf, err := OpenCaseFile(path)
					if err != nil {
						return 0, err
					}
					defer cf.Close()
					for row := range int64(25) {
						if _, err := cf.ReadCase(row); err != nil {
							return int(row), err
						}
					}
					return 25, nil
				},
			} {
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				n, err := read()
				runtime.ReadMemStats(&after)
				if tc.unreadable {
					assert.ErrorIs(t, err, ErrUnreadable, name)
					assert.ErrorContains(t, err, path, name)
				} else if assert.NoError(t, err, name) {
					assert.Equal(t, 25, n, "%s: rows read", name)
				}
				assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(64<<20), "%s: bytes allocated", name)
			}
		})
	}
}

// A footer whose row count disagrees with its column chunks' value counts (a forged count)
// makes the file unreadable through every reader, at open, before anything is allocated for
// the rows claimed: ReadCases allocated 967 MiB for a claim of 2^20 rows and returned the 25
// rows there with no error, and a claim of 2^33 stopped the process (fatal error: out of memory,
// which no recover catches); ReadIndex and a restarted writer's read of the case ids allocated
// for the claim too; the scans returned no error, and ReadCase and ReadRows of a row claimed but
// missing returned a row of the next row group.
func TestAFooterThatClaimsMoreRowsThanThePagesHoldIsUnreadable(t *testing.T) {
	for _, claim := range []int64{11, 1 << 20, 1 << 33} {
		t.Run(fmt.Sprint(claim), func(t *testing.T) {
			w := newWriter(t)
			res, err := w.Write(manyCases(t)) // 25 rows: row groups of 10, 10 and 5
			require.NoError(t, err)
			path := res.Files[0].Path
			testdataset.EditFooter(t, path, func(m *format.FileMetaData) {
				m.RowGroups[1].NumRows = claim
				m.NumRows = 15 + claim
			})

			for name, read := range map[string]func() error{
				"ScanReadableCases": func() error {
					var read, lost int64
					err := ScanReadableCases(path, 0, 10, func(int64, *CaseRow) error { read++; return nil },
						func(from, to int64, _ error) { lost += to - from })
					assert.Zero(t, read+lost, "the file is refused at open")
					return err
				},
				"ScanCases": func() error {
					return ScanCases(path, 0, 10, func(int64, *CaseRow) error { return nil })
				},
				"ReadCases": func() error { _, err := ReadCases(path); return err },
				"ReadIndex": func() error { _, err := ReadIndex(path); return err },
				"ScanReplayIndex": func() error {
					return ScanReplayIndex(path, func(int64, *ReplayIndexRow) error { return nil })
				},
				"readCaseIDs": func() error { _, err := ReadCaseIDCount(path); return err },
				"ReadCase":    func() error { _, err := ReadCase(path, 10+claim-1); return err },
				"ReadRows":    func() error { _, err := ReadRows(path, []int64{10 + claim - 1}); return err },
				"OpenCaseFile": func() error {
					cf, err := OpenCaseFile(path)
					if err == nil {
						_, err = cf.ReadCase(10 + claim - 1)
						cf.Close()
					}
					return err
				},
			} {
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				err := read()
				runtime.ReadMemStats(&after)
				assert.ErrorIs(t, err, ErrUnreadable, name)
				assert.ErrorContains(t, err, path, name)
				assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(64<<20), "%s: bytes allocated", name)
			}
		})
	}
}
