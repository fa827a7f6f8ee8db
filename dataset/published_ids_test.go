package dataset

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/replaycase"
)

// readCaseIDs reads, column by column, what a row reader of caseIDRow reads: every row's id,
// verdict and counts in file order across row groups, and of its metadata the source row
// alone (countOf reads nothing else), whether the map is empty, holds other keys, or holds
// it among them.
func TestReadCaseIDsReadsWhatARowReaderReads(t *testing.T) {
	dir := t.TempDir()
	w, err := NewWriter(WriterConfig{
		Root: filepath.Join(dir, "data"), Staging: filepath.Join(dir, "data.staging"),
		Compression: "zstd", MaxRowsPerFile: 100, RowGroupRows: 10,
	})
	require.NoError(t, err)
	cases := make([]*replaycase.Case, 25) // row groups of 10, 10 and 5 (fewer in quarantine/)
	for i := range cases {
		c := &replaycase.Case{CaseID: fmt.Sprintf("%032x", i+1), Status: replaycase.StatusAccepted, StartTime: time.Date(2026, 12, 7, 10, 0, i, 0, time.UTC)}
		cases[i] = c
		switch i % 4 {
		case 1:
			c.Metadata = map[string]string{"team": "search"}
		case 2:
			c.Metadata = map[string]string{"a": "1", MetaRedrivenFrom: fmt.Sprintf("quarantine/dt=2026-12-07/f.parquet#%d", i), "z": "2"}
		case 3:
			c.Metadata = map[string]string{MetaRedrivenFrom: fmt.Sprintf("cases/dt=2026-12-07/g.parquet#%d", i)}
			c.Quarantine(replaycase.ReasonNoModelOutput, "", "")
		}
		c.Provenance.SpanCount, c.Provenance.EventCount = int64(i), int64(2*i)
	}
	res, err := w.Write(cases)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	require.NoError(t, err)
	require.NotEmpty(t, res.Files)
	n := 0
	for _, f := range res.Files {
		if f.Dataset != Cases && f.Dataset != Quarantine {
			continue
		}
		want, err := readAll[caseIDRow](f.Path, nil)
		require.NoError(t, err)
		for i := range want {
			if from, ok := want[i].Metadata[MetaRedrivenFrom]; ok {
				want[i].Metadata = map[string]string{MetaRedrivenFrom: from}
			} else {
				want[i].Metadata = nil
			}
		}
		got, err := readCaseIDs(f.Path)
		require.NoError(t, err)
		assert.Equal(t, want, got, f.Path)
		n += len(got)
		for i := range got {
			assert.Equal(t, countOf(want[i].Provenance.SpanCount, want[i].Provenance.EventCount, want[i].Status, want[i].Metadata),
				countOf(got[i].Provenance.SpanCount, got[i].Provenance.EventCount, got[i].Status, got[i].Metadata))
		}
	}
	assert.Equal(t, len(cases), n, "every row, across row groups")
}
