package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/replaycase"
)

// An --response with no message (an empty array, or JSON null read as no text) is refused:
// the edited step would answer nothing, and for the step that gave the run's answer the edit
// took its first message and panicked.
func TestMutateRefusesAResponseWithoutAMessage(t *testing.T) {
	root, cases := fixtureDataset(t, testfixtures.OTelEvents)
	for _, args := range [][]string{
		{"--step", "3", "--response", `[]`},   // the answering step
		{"--step", "1", "--response", `[]`},   // an earlier one
		{"--step", "3", "--response", `null`}, // not a JSON string
	} {
		code, _, errOut := run(t, append([]string{"mutate", cases[0].CaseID, "--dataset", root}, args...)...)
		assert.Equal(t, ExitError, code, "%v: %s", args, errOut)
		assert.Contains(t, errOut, "--response", args)
	}
	all, err := readDataset(root)
	require.NoError(t, err)
	assert.Len(t, all, 1, "nothing written")
}

// A flag given twice is refused, not settled by the last one: `--tool-error a --tool-error b`
// wrote the case of edit b, and `--dataset A … --dataset B` read B, without a word.
func TestAFlagGivenTwiceIsRefused(t *testing.T) {
	root, cases := fixtureDataset(t, testfixtures.OTelEvents)
	for _, args := range [][]string{
		{"mutate", cases[0].CaseID, "--step", "2", "--tool-error", "a", "--tool-error", "b", "--dataset", root},
		{"mutate", cases[0].CaseID, "--step", "2", "--step", "3", "--tool-error", "a", "--dataset", root},
		{"show", cases[0].CaseID, "--dataset", root, "--dataset", t.TempDir()},
		{"diff", cases[0].CaseID, cases[0].CaseID, "--format", "json", "--dataset", root, "--format", "markdown"},
	} {
		code, _, errOut := run(t, args...)
		assert.Equal(t, ExitError, code, "%v: %s", args, errOut)
		assert.Contains(t, errOut, "given twice", args)
	}
	all, err := readDataset(root)
	require.NoError(t, err)
	assert.Len(t, all, 1, "nothing written")

	// A repeatable flag still repeats.
	code, _, errOut := run(t, "ls", "--dataset", root, "--case", "x", "--case", cases[0].CaseID)
	assert.Equal(t, ExitOK, code, errOut)
}

// A steps/ file of a dataset is a Parquet file with the same footer as a case file, and its
// rows have case ids: import read each step row as a case and wrote hollow cases (status
// unset, no steps) under the ids of real ones, which then kept the real ones out as "already
// there". It is refused, and show does not print it as a case either.
func TestImportRefusesAFileOfSteps(t *testing.T) {
	src, _ := fixtureDataset(t, testfixtures.OTelEvents)
	files, err := dataset.NewLister(src, dataset.Steps).Next()
	require.NoError(t, err)
	require.NotEmpty(t, files)
	steps := files[0].Path

	dst := filepath.Join(t.TempDir(), "other")
	code, out, errOut := run(t, "import", steps, "--dataset", dst)
	assert.Equal(t, ExitError, code, out)
	assert.Contains(t, errOut, "not a file of case rows")
	_, err = readDataset(dst)
	assert.Error(t, err, "no dataset was made")

	code, out, errOut = run(t, "show", steps)
	assert.Equal(t, ExitError, code, out)
	assert.Contains(t, errOut, "not a file of case rows")
}

// A mutated case carries the original's trace, agent, status and start time: ls and show
// printed it as one more recorded run of the agent. They say what it is made from.
func TestLsAndShowMarkAMutatedCase(t *testing.T) {
	root, cases := fixtureDataset(t, testfixtures.OTelEvents)
	orig := cases[0]
	code, out, errOut := run(t, "mutate", orig.CaseID, "--step", "2", "--tool-error", "down", "--dataset", root)
	require.Equal(t, ExitOK, code, errOut)
	mutated := strings.TrimSpace(out)

	code, out, errOut = run(t, "ls", "--dataset", root)
	require.Equal(t, ExitOK, code, errOut)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 3, out)
	assert.Contains(t, lines[0], "MUTATION_OF")
	for _, l := range lines[1:] {
		if strings.HasPrefix(l, mutated) {
			assert.True(t, strings.HasSuffix(l, orig.CaseID), "the mutated case names its original: %s", l)
		} else {
			assert.Equal(t, 1, strings.Count(l, orig.CaseID), "the recorded case names no original: %s", l)
		}
	}

	code, out, errOut = run(t, "show", mutated, "--dataset", root)
	require.Equal(t, ExitOK, code, errOut)
	assert.Contains(t, out, "mutation of case "+orig.CaseID+", not a recorded run: "+`{"step":2,"edit":"tool_error","value":"down"}`)
	code, out, errOut = run(t, "show", orig.CaseID, "--dataset", root)
	require.Equal(t, ExitOK, code, errOut)
	assert.NotContains(t, out, "mutation")
}

// A hybrid run that reprise ci --record keeps names its recorded case in derived_from, as a
// mutation does, but it is a run the agent made, not an edit: ls printed that case as its
// MUTATION_OF, and so listed a recorded run as a mutation.
func TestLsDoesNotMarkALiveRunAsAMutation(t *testing.T) {
	root, cases := fixtureDataset(t, testfixtures.OTelEvents, testfixtures.Traceloop)
	live := *cases[1]
	live.Metadata = map[string]string{replaycase.MetaDerivedFrom: cases[0].CaseID}
	writeAgain(t, root, []*replaycase.Case{&live})

	code, out, errOut := run(t, "ls", "--dataset", root, "--case", live.CaseID)
	require.Equal(t, ExitOK, code, errOut)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 2, out)
	assert.NotContains(t, lines[1], cases[0].CaseID, "a live run is no mutation: %s", lines[1])
}

// export writes a new file: one that exists (an earlier export, or a data file of a dataset
// named by mistake) was replaced, and the cases it held were gone from it.
func TestExportRefusesAFileThatExists(t *testing.T) {
	root, cases := fixtureDataset(t, testfixtures.OTelEvents, testfixtures.Traceloop)
	out := filepath.Join(t.TempDir(), "bug.parquet")
	code, _, errOut := run(t, "export", cases[0].CaseID, "--dataset", root, "--out", out)
	require.Equal(t, ExitOK, code, errOut)
	before, err := os.ReadFile(out)
	require.NoError(t, err)

	code, _, errOut = run(t, "export", cases[1].CaseID, "--dataset", root, "--out", out)
	assert.Equal(t, ExitError, code)
	assert.Contains(t, errOut, "exists")
	after, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Equal(t, before, after, "the first export is kept")
}

// A negative --step is named as what it is: it was taken for the flag's absence, and the
// user who gave `--step -1` was told "--step is required".
func TestMutateNamesANegativeStep(t *testing.T) {
	root, cases := fixtureDataset(t, testfixtures.OTelEvents)
	code, _, errOut := run(t, "mutate", cases[0].CaseID, "--step", "-1", "--tool-error", "x", "--dataset", root)
	assert.Equal(t, ExitError, code, errOut)
	assert.Contains(t, errOut, "--step -1")
	assert.NotContains(t, errOut, "--step is required")
	code, _, errOut = run(t, "mutate", cases[0].CaseID, "--tool-error", "x", "--dataset", root)
	assert.Equal(t, ExitError, code, errOut)
	assert.Contains(t, errOut, "--step is required")
}

// A failed tool step prints its error once: the call's error (→ error: …) and the step's (!
// error: …) are the same text, and show printed it on two lines.
func TestShowPrintsAToolErrorOnce(t *testing.T) {
	root, cases := fixtureDataset(t, testfixtures.OTelEvents)
	code, out, errOut := run(t, "mutate", cases[0].CaseID, "--step", "2", "--tool-error", "weather service down", "--dataset", root)
	require.Equal(t, ExitOK, code, errOut)
	code, out, errOut = run(t, "show", strings.TrimSpace(out), "--dataset", root)
	require.Equal(t, ExitOK, code, errOut)
	assert.Equal(t, 1, strings.Count(out, "error: weather service down"), out)
}
