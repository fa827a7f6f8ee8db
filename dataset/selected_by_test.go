package dataset_test

import (
	"path/filepath"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/replaycase"
)

// selected_by is an optional column: written when the processor selected the run, null
// otherwise, and read back by a reader that knows nothing of the case model.
func TestSelectedByIsAnOptionalColumn(t *testing.T) {
	w := newWriter(t)
	cases := fixtureCases(t)
	cases[0].SelectedBy = "error_root"
	_, err := w.Write(cases)
	require.NoError(t, err)

	got := map[string]*string{}
	for _, f := range tree(t, w.Root()) {
		if filepath.Dir(filepath.Dir(f)) != "cases" {
			continue
		}
		type row struct {
			CaseID     string  `parquet:"case_id"`
			SelectedBy *string `parquet:"selected_by,optional"`
		}
		rows, err := parquet.ReadFile[row](filepath.Join(w.Root(), f))
		require.NoError(t, err)
		for _, r := range rows {
			got[r.CaseID] = r.SelectedBy
		}
	}
	require.Len(t, got, 2)
	require.Equal(t, replaycase.StatusAccepted, cases[0].Status)
	for _, c := range cases {
		if c.Status != replaycase.StatusAccepted {
			continue
		}
		if c.SelectedBy == "" {
			assert.Nil(t, got[c.CaseID])
		} else {
			require.NotNil(t, got[c.CaseID])
			assert.Equal(t, "error_root", *got[c.CaseID])
		}
	}
}
