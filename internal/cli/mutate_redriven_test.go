package cli

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/internal/testdataset"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/replaycase"
)

// The same edit of the same case is the same case: mutating again prints its id and says on
// standard error that it was already there. After the original is re-driven (its quarantine
// row superseded by an accepted row with the same id), the same edit is of a different row:
// the derived case is written again and its current row is the edit of the re-driven case,
// not the quarantined derivation of the old row.
func TestMutateAgainAfterARedrive(t *testing.T) {
	root, cases := fixtureDataset(t, testfixtures.OTelNoContent)
	orig := cases[0]
	require.Equal(t, replaycase.StatusQuarantined, orig.Status)
	edit := []string{"mutate", orig.CaseID, "--step", "2", "--tool-error", "weather service down", "--dataset", root}

	code, out, errOut := run(t, edit...)
	require.Equal(t, ExitOK, code, errOut)
	derivedID := strings.TrimSpace(out)
	assert.Empty(t, errOut)
	files := datasetFiles(t, root)

	code, out, errOut = run(t, edit...)
	require.Equal(t, ExitOK, code, errOut)
	assert.Equal(t, derivedID, strings.TrimSpace(out))
	assert.Contains(t, errOut, "case "+derivedID+" is already in "+root)
	assert.Equal(t, files, datasetFiles(t, root), "nothing written again")

	redrive(t, root, orig.CaseID)
	code, out, errOut = run(t, edit...)
	require.Equal(t, ExitOK, code, errOut)
	assert.Equal(t, derivedID, strings.TrimSpace(out), "the id depends on the original's id and the edit")
	assert.Contains(t, errOut, "written again")
	derived, err := loadCase(derivedID, root)
	require.NoError(t, err)
	assert.Equal(t, replaycase.StatusAccepted, derived.Status, "the edit of the re-driven, accepted case")
	assert.Empty(t, derived.Reasons)
	assert.Equal(t, "quarantine/dt=x#0", derived.Metadata["redriven_from"])
	assert.Equal(t, replaycase.StepError, derived.Steps[2].Status)

	files = datasetFiles(t, root)
	code, out, errOut = run(t, edit...)
	require.Equal(t, ExitOK, code, errOut)
	assert.Equal(t, derivedID, strings.TrimSpace(out))
	assert.Contains(t, errOut, "is already in", "the edit of the current row is there now")
	assert.Equal(t, files, datasetFiles(t, root))
}

// redrive writes what a re-drive of the quarantined case id under a relaxed policy writes: the
// same case accepted, with the row it came from in its metadata, through the exporter into a
// newer file.
func redrive(t *testing.T, root, id string) {
	t.Helper()
	c, err := loadCase(id, root)
	require.NoError(t, err)
	c.Status, c.Reasons = replaycase.StatusAccepted, nil
	if c.Metadata == nil {
		c.Metadata = map[string]string{}
	}
	c.Metadata["redriven_from"] = "quarantine/dt=x#0"
	td := ptrace.NewTraces()
	require.NoError(t, replaycase.Encode(c, td))
	w := testdataset.Writer(t, root, "zstd")
	require.NoError(t, w.ConsumeTraces(context.Background(), td))
	require.NoError(t, w.Shutdown(context.Background()))
	current, err := loadCase(id, root)
	require.NoError(t, err)
	require.Equal(t, replaycase.StatusAccepted, current.Status, "the re-driven row is the current one")
}

func datasetFiles(t *testing.T, root string) []string {
	t.Helper()
	files, err := dataset.NewLister(root, dataset.Cases, dataset.Quarantine, dataset.Steps).Next()
	require.NoError(t, err)
	var paths []string
	for _, f := range files {
		paths = append(paths, f.Path)
	}
	return paths
}
