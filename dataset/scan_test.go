package dataset_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	. "github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/internal/testdataset/roundtrip"
	"github.com/reprise-dev/reprise/replaycase"
)

// manyCases is 25 copies of a real quarantined case with distinct ids (one partition).
func manyCases(t *testing.T) []*replaycase.Case {
	base := fixtureCases(t)[2]
	out := make([]*replaycase.Case, 25)
	for i := range out {
		c := *base
		c.CaseID = fmt.Sprintf("case-%02d", i)
		out[i] = &c
	}
	return out
}

func TestScanCasesFromARowAcrossRowGroups(t *testing.T) {
	w := newWriter(t) // 10 rows per row group
	res, err := w.Write(manyCases(t))
	require.NoError(t, err)
	require.Len(t, res.Files, 1)
	path := res.Files[0].Path
	scan := func(from int64) (ids []string, rows []int64) {
		require.NoError(t, ScanCases(path, from, 4, func(row int64, c *CaseRow) error {
			ids, rows = append(ids, c.CaseID), append(rows, row)
			return nil
		}))
		return ids, rows
	}
	ids, rows := scan(0)
	require.Len(t, ids, 25)
	for i := range ids {
		assert.Equal(t, int64(i), rows[i])
	}
	tail, tailRows := scan(13)
	assert.Equal(t, ids[13:], tail, "continuing at row 13 gives the same rows as a full scan")
	assert.Equal(t, int64(13), tailRows[0])
	none, _ := scan(25)
	assert.Empty(t, none)

	stop := errors.New("stop")
	n := 0
	err = ScanCases(path, 0, 4, func(int64, *CaseRow) error { n++; return stop })
	assert.ErrorIs(t, err, stop)
	assert.Equal(t, 1, n)
}

func TestCaseFileRoundTrip(t *testing.T) {
	cases := fixtureCases(t)
	rows := make([]CaseRow, len(cases))
	for i, c := range cases {
		rows[i] = *c
	}
	path := filepath.Join(t.TempDir(), "export.parquet")
	require.NoError(t, WriteCaseFile(path, "zstd", rows))
	back, err := ReadCases(path)
	require.NoError(t, err)
	require.Len(t, back, len(rows))
	for i := range rows {
		roundtrip.AssertSameCase(t, rows[i], back[i])
	}
	assert.Error(t, WriteCaseFile(filepath.Join(t.TempDir(), "x.parquet"), "lz4", rows), "an unknown codec is refused")
}

// A read never allocates more rows than the file has left: rowsPerRead (the replay_parquet
// receiver's batch_size) bounds a read, and a large one over a small file allocated a buffer of
// its whole size for each file (840 bytes a row: batch_size 1048576 is 880 MB per file read,
// and a larger one crashed the collector out of memory).
func TestScanCasesAllocatesForTheRowsTheFileHas(t *testing.T) {
	w := newWriter(t)
	res, err := w.Write(manyCases(t))
	require.NoError(t, err)
	require.Len(t, res.Files, 1)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var rows []int64
	require.NoError(t, ScanCases(res.Files[0].Path, 20, 1<<20, func(row int64, _ *CaseRow) error {
		rows = append(rows, row)
		return nil
	}))
	runtime.ReadMemStats(&after)
	assert.Equal(t, []int64{20, 21, 22, 23, 24}, rows)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(64<<20), "bytes allocated to read 5 rows")
}
