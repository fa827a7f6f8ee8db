package dataset_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	. "github.com/reprise-dev/reprise/dataset"
)

// A case without start and end times (OTLP time 0, or one past 2262: the zero time.Time), one
// of its steps too, is written as 0001-01-01T00:00:00Z, which parquet-go v0.32 reads as
// 1754-08-30T22:43:41.128654848Z. Every reader here gives the zero time back, and leaves the
// times of the other cases as they were.
func TestZeroTimesReadBackAsZero(t *testing.T) {
	w := newWriter(t)
	_, err := w.Recover(time.Now())
	require.NoError(t, err)
	cases := fixtureCases(t)
	timeless := cases[0]
	require.NotEmpty(t, timeless.Steps)
	timeless.StartTime, timeless.EndTime = time.Time{}, time.Time{}
	timeless.Steps[0].StartTime, timeless.Steps[0].EndTime = time.Time{}, time.Time{}
	other := cases[1]
	otherStart := other.StartTime.Truncate(time.Microsecond)
	res, err := w.Write(cases)
	require.NoError(t, err)

	zero := func(what string, start, end time.Time) {
		t.Helper()
		assert.True(t, start.IsZero(), "%s: start %s", what, start)
		assert.True(t, end.IsZero(), "%s: end %s", what, end)
	}
	found := 0
	for _, f := range res.Files {
		if f.Dataset == Steps {
			steps, err := ReadSteps(f.Path)
			require.NoError(t, err)
			for _, s := range steps {
				if s.CaseID == timeless.CaseID && s.Index == timeless.Steps[0].Index {
					zero("ReadSteps", s.StartTime, s.EndTime)
					found++
				}
			}
			continue
		}
		rows, err := ReadCases(f.Path)
		require.NoError(t, err)
		index, err := ReadIndex(f.Path)
		require.NoError(t, err)
		for i, row := range rows {
			if row.CaseID == other.CaseID {
				assert.True(t, otherStart.Equal(row.StartTime), "a time in range is read as written")
				assert.True(t, otherStart.Equal(index[i].StartTime))
			}
			if row.CaseID != timeless.CaseID {
				continue
			}
			found++
			r := int64(i)
			zero("ReadCases", row.StartTime, row.EndTime)
			zero("ReadCases step", row.Steps[0].StartTime, row.Steps[0].EndTime)
			zero("ReadIndex", index[i].StartTime, index[i].EndTime)
			c, err := ReadCase(f.Path, r)
			require.NoError(t, err)
			zero("ReadCase", c.StartTime, c.EndTime)
			zero("ReadCase step", c.Steps[0].StartTime, c.Steps[0].EndTime)
			byRow, err := ReadRows(f.Path, []int64{r})
			require.NoError(t, err)
			zero("ReadRows", byRow[r].StartTime, byRow[r].EndTime)
			zero("ReadRows step", byRow[r].Steps[0].StartTime, byRow[r].Steps[0].EndTime)
			require.NoError(t, ScanCases(f.Path, r, 1, func(row int64, c *CaseRow) error {
				if row == r {
					zero("ScanCases", c.StartTime, c.EndTime)
					zero("ScanCases step", c.Steps[0].StartTime, c.Steps[0].EndTime)
				}
				return nil
			}))
			cf, err := OpenCaseFile(f.Path)
			require.NoError(t, err)
			c, err = cf.ReadCase(r)
			require.NoError(t, err)
			zero("CaseFile.ReadCase", c.StartTime, c.EndTime)
			zero("CaseFile.ReadCase step", c.Steps[0].StartTime, c.Steps[0].EndTime)
			sums, err := cf.ReadSummaries([]int64{r})
			require.NoError(t, err)
			zero("CaseFile.ReadSummaries", sums[r].StartTime, sums[r].EndTime)
			require.NoError(t, cf.Close())
		}
	}
	assert.Equal(t, 2, found, "the timeless case's row and its step's row were read")
}
