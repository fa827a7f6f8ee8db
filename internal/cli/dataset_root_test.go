package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/internal/testfixtures"
)

// A --dataset that is not a dataset root is named as what it is: the cases/ directory of a
// root (a natural slip) was read as an empty root, so `reprise ls` listed no case and exited
// 0, and a Parquet data file gave two raw "not a directory" errors.
func TestADatasetThatIsNotARootIsNamed(t *testing.T) {
	root, cases := fixtureDataset(t, testfixtures.OTelEvents)
	files, err := dataset.NewLister(root, dataset.Cases).Next()
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, c := range []struct {
		dataset, want string
	}{
		{filepath.Join(root, dataset.Cases), "give " + root},
		{filepath.Join(root, dataset.Steps), "give " + root},
		{files[0].Path, "is a file, not a dataset root"},
	} {
		id := cases[0].CaseID
		for _, args := range [][]string{
			{"ls", "--dataset", c.dataset},
			{"show", id, "--dataset", c.dataset},
			{"mutate", id, "--step", "2", "--tool-error", "down", "--dataset", c.dataset},
			{"mutate", id, "--step", "2", "--tool-error", "down", "--dataset", root, "--out", c.dataset},
		} {
			code, _, errOut := run(t, args...)
			assert.Equal(t, ExitError, code, "%v: %s", args, errOut)
			assert.Contains(t, errOut, c.want, args)
		}
	}
	entries, err := os.ReadDir(filepath.Join(root, dataset.Cases))
	require.NoError(t, err)
	for _, e := range entries {
		assert.NotEqual(t, dataset.Cases, e.Name(), "mutate --out wrote a dataset inside cases/")
	}
}

// A Parquet file of several cases (an export) cannot be named as a case; the error says how to
// reach them (import the file), not "with --dataset", which takes a directory and failed.
func TestShowOfAFileOfSeveralCasesSaysHowToReachThem(t *testing.T) {
	root, cases := fixtureDataset(t, testfixtures.OTelEvents, testfixtures.OTelNoContent)
	file := filepath.Join(t.TempDir(), "bug.parquet")
	code, _, errOut := run(t, "export", cases[0].CaseID, cases[1].CaseID, "--dataset", root, "--out", file)
	require.Equal(t, ExitOK, code, errOut)
	code, _, errOut = run(t, "show", file)
	assert.Equal(t, ExitError, code)
	assert.Contains(t, errOut, "reprise import "+file+" --dataset DIR")
}
