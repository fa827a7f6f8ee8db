package replayext

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/replaycase"
)

// Cases whose partition the exporter's retention deleted are neither listed nor replayed after
// the next refresh; the others still are.
func TestStoreForgetsExpiredCases(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	w, err := dataset.NewWriter(dataset.WriterConfig{Root: root, Staging: root + ".staging", Compression: "zstd", MaxRowsPerFile: 100, RowGroupRows: 10})
	require.NoError(t, err)
	var cases []*replaycase.Case
	for i := 0; i < 4; i++ {
		c := syntheticCase(i, 100)
		if i < 2 {
			c.StartTime = c.StartTime.AddDate(-1, 0, 0) // a year old
		}
		cases = append(cases, c)
	}
	_, err = w.Write(cases)
	require.NoError(t, err)
	old := time.Now().Add(-48 * time.Hour)
	require.NoError(t, filepath.Walk(root, func(p string, _ os.FileInfo, _ error) error { return os.Chtimes(p, old, old) }))
	s := newStore(root, 4)
	added, _, _ := s.refresh().counts()
	require.Equal(t, 4, added)
	_, err = s.get(cases[0].CaseID) // cached before it expires
	require.NoError(t, err)

	_, err = dataset.Expire(root, dataset.Retention{Cases: 180 * 24 * time.Hour}, time.Now())
	require.NoError(t, err)
	_, dropped, _ := s.refresh().counts()
	assert.Equal(t, 2, dropped, "the loaded-cases metric goes down by what retention removed")

	assert.Equal(t, []string{cases[2].CaseID, cases[3].CaseID}, listAll(s))
	for _, c := range cases[:2] {
		assert.False(t, s.has(c.CaseID))
		_, err := s.get(c.CaseID)
		assert.ErrorIs(t, err, errNoCase)
		assert.Empty(t, s.callsFor(c.Steps[0].CallSiteID))
	}
	for _, c := range cases[2:] {
		got, err := s.get(c.CaseID)
		require.NoError(t, err)
		assert.Equal(t, c.CaseID, got.CaseID)
		assert.Len(t, s.callsFor(c.Steps[0].CallSiteID), 1)
	}
}
