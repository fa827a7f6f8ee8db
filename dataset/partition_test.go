package dataset_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	. "github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/replaycase"
)

// Every dt= directory is a YYYY-MM-DD date: a start time outside the years 0001–9999 (a row
// imported from another tool's file) named dt=10000-01-02 or dt=-0005-01-02, and Polars then
// read dt as a string for the whole dataset. Such a case goes to the partition of now, like a
// case without a start time.
func TestEveryPartitionIsADate(t *testing.T) {
	w := newWriter(t)
	var cases []*replaycase.Case
	for i, start := range []time.Time{
		time.Date(10000, 1, 2, 3, 4, 5, 0, time.UTC),
		time.Date(-5, 1, 2, 3, 4, 5, 0, time.UTC),
		time.Date(0, 12, 31, 23, 0, 0, 0, time.UTC),
		time.Date(9999, 12, 31, 23, 0, 0, 0, time.FixedZone("", -2*3600)), // 10000-01-01 in UTC
		time.Date(1, 1, 1, 0, 0, 0, 1000, time.UTC),                       // the first representable day
	} {
		cases = append(cases, &replaycase.Case{
			CaseID: string(rune('a' + i)), SchemaVersion: SchemaVersion, Status: replaycase.StatusAccepted,
			StartTime: start, EndTime: start,
		})
	}
	before := time.Now().UTC().Format(time.DateOnly)
	res, err := w.Write(cases)
	require.NoError(t, err)
	after := time.Now().UTC().Format(time.DateOnly)
	starts := map[string]bool{}
	for _, f := range res.Files {
		assert.Regexp(t, `^\d{4}-\d{2}-\d{2}$`, f.Partition)
		if _, err := time.Parse(time.DateOnly, f.Partition); err != nil {
			t.Errorf("partition %s: %v", f.Partition, err)
		}
		if f.Dataset != Cases {
			continue
		}
		rows, err := ReadCases(f.Path)
		require.NoError(t, err)
		for _, r := range rows {
			starts[r.CaseID] = true
			if r.CaseID == "e" {
				assert.Equal(t, "0001-01-01", f.Partition)
			} else {
				assert.Contains(t, []string{before, after}, f.Partition, r.CaseID)
			}
		}
	}
	// Every case is written. (Their start_time is stored as written, but parquet-go reads a
	// timestamp outside the years 1677–2262 through int64 nanoseconds, which overflow.)
	assert.Len(t, starts, len(cases))
}

// A staging directory inside the root, named relative where the root is absolute, or through a
// symbolic link, is refused like one named plainly: readers glob the root, and would read the
// segments being written as data.
func TestStagingInsideTheRootIsRefusedHoweverNamed(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "data")
	require.NoError(t, os.MkdirAll(filepath.Join(root, "cases"), 0o755))
	require.NoError(t, os.Symlink(filepath.Join(root, "cases"), filepath.Join(base, "link")))
	t.Chdir(base)
	for _, staging := range []string{
		filepath.Join(root, "cases", ".staging"),   // plainly
		filepath.Join("data", "cases", ".staging"), // relative, the root absolute
		filepath.Join(base, "link", ".staging"),    // through a symbolic link
	} {
		_, err := NewWriter(WriterConfig{Root: root, Staging: staging, Compression: "zstd", MaxRowsPerFile: 10, RowGroupRows: 10})
		assert.ErrorContains(t, err, "must be outside the dataset root", staging)
	}
	_, err := NewWriter(WriterConfig{Root: "data", Staging: "data.staging", Compression: "zstd", MaxRowsPerFile: 10, RowGroupRows: 10})
	assert.NoError(t, err, "a sibling of the root")
}
