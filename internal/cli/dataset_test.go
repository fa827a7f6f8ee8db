package cli

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"

	"github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/internal/testdataset"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/internal/testpipeline"
	"github.com/reprise-dev/reprise/replaycase"
)

// writeAgain adds cases to the dataset at root as a later batch, whatever ids it holds (a
// re-delivered or re-driven run).
func writeAgain(t testing.TB, root string, cases []*replaycase.Case) {
	w, err := dataset.NewWriter(dataset.WriterConfig{Root: root, Staging: root + ".staging", Compression: "zstd", MaxRowsPerFile: 100_000, RowGroupRows: 5_000})
	require.NoError(t, err)
	_, err = w.Recover(time.Now().Add(-15 * time.Minute))
	require.NoError(t, err)
	_, err = w.Write(cases)
	require.NoError(t, err)
	require.NoError(t, w.Close())
}

// A case named by id is its latest row, as readDataset gives it, found from the index columns;
// a prefix that names several cases, none, or nothing at all is refused.
func TestLoadCaseFindsTheLatestRowByIndex(t *testing.T) {
	root, cases := fixtureDataset(t, testfixtures.OTelEvents, testfixtures.Traceloop)
	require.Len(t, cases, 2)
	again := *cases[0]
	again.Metadata = map[string]string{"run": "again"}
	writeAgain(t, root, []*replaycase.Case{&again})

	got, err := loadCase(cases[0].CaseID[:10], root)
	require.NoError(t, err)
	assert.Equal(t, "again", got.Metadata["run"], "the latest row")
	all, err := readDataset(root)
	require.NoError(t, err)
	require.Len(t, all, 2)
	for _, c := range all {
		byID, err := loadCase(c.CaseID, root)
		require.NoError(t, err)
		assert.Equal(t, c, byID, "the whole row readDataset takes")
	}

	for _, ref := range []string{"", "ffffffffff"} {
		_, err := loadCase(ref, root)
		assert.Error(t, err, "%q", ref)
	}
}

// BenchmarkLoadCase: one case of a dataset of 4 files × 500 cases, found from the index columns
// and read with the file that holds it, against reading every row of the dataset (readDataset,
// what loadCase did before).
// Run: go test -run '^$' -bench LoadCase -benchmem -count 3 ./internal/cli/
func BenchmarkLoadCase(b *testing.B) {
	root := filepath.Join(b.TempDir(), "data")
	base := testpipeline.Run(b, consumertest.NewNop(), testfixtures.OTelEvents, testfixtures.Traceloop)
	for i := range 4 {
		batch := testdataset.OfferingTools(base, 250, testdataset.DistinctTools(5))
		for _, c := range batch {
			c.CaseID = replaycase.ID(c.Provenance.TraceID, fmt.Sprint(i, "/", c.CaseID))
		}
		writeAgain(b, root, batch)
	}
	all, err := readDataset(root)
	require.NoError(b, err)
	require.Len(b, all, 2000)
	id := all[1234].CaseID
	b.Run("index-then-file", func(b *testing.B) {
		for b.Loop() {
			if c, err := loadCase(id, root); err != nil || c.CaseID != id {
				b.Fatal(err)
			}
		}
	})
	b.Run("all-rows", func(b *testing.B) {
		for b.Loop() {
			cases, err := readDataset(root)
			if err != nil {
				b.Fatal(err)
			}
			found := false
			for _, c := range cases {
				found = found || c.CaseID == id
			}
			if !found {
				b.Fatal("not found")
			}
		}
	})
}
