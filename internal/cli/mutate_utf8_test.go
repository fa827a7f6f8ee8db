package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/internal/testfixtures"
)

// A case whose strings are not valid UTF-8 (here an export file written by another tool, or
// before the writer repaired them) gives a new case stored as the dataset writer repairs it:
// U+FFFD for each invalid byte sequence, every metadata entry kept. The same edit again
// compares equal to that row and is not written a second time.
func TestMutateAgainOfACaseWithInvalidUTF8(t *testing.T) {
	_, cases := fixtureDataset(t, testfixtures.OTelEvents)
	rows := []dataset.CaseRow{*cases[0]}
	rows[0].AgentName = "weather\xff\xfebot"
	rows[0].Metadata = map[string]string{"k\xff": "1", "k\xfe": "2"}
	file := filepath.Join(t.TempDir(), "export.parquet")
	require.NoError(t, dataset.WriteCaseFile(file, "zstd", rows))
	root := filepath.Join(t.TempDir(), "data")
	edit := []string{"mutate", file, "--step", "2", "--tool-error", "weather service down", "--dataset", root}

	code, out, errOut := run(t, edit...)
	require.Equal(t, ExitOK, code, errOut)
	assert.Contains(t, errOut, "warning: 3 strings of case "+cases[0].CaseID+" and the edit were not valid UTF-8")
	files := datasetFiles(t, root)
	derived, err := loadCase(strings.TrimSpace(out), root)
	require.NoError(t, err)
	assert.Equal(t, "weather\uFFFDbot", derived.AgentName, "one U+FFFD for the sequence, as the writer stores it")
	assert.Equal(t, "1", derived.Metadata["k\uFFFD\uFFFD"], `"k\xff" sorts after "k\xfe": it gets the second U+FFFD`)
	assert.Equal(t, "2", derived.Metadata["k\uFFFD"])

	code, _, errOut = run(t, edit...)
	require.Equal(t, ExitOK, code, errOut)
	assert.Contains(t, errOut, "is already in "+root)
	assert.Equal(t, files, datasetFiles(t, root), "one row: nothing written again")
}

// --tool-error's text is the user's, passed as it is: invalid UTF-8 in it is repaired before
// the new case is made and its id derived, so a repeat finds the row it wrote under the same id,
// and the id is the one of the text as stored (the same edit given with the U+FFFD).
func TestMutateAgainWithAnEditOfInvalidUTF8(t *testing.T) {
	root, cases := fixtureDataset(t, testfixtures.OTelEvents)
	edit := []string{"mutate", cases[0].CaseID, "--step", "2", "--tool-error", "weather \xff\xfeservice down", "--dataset", root}

	code, out, errOut := run(t, edit...)
	require.Equal(t, ExitOK, code, errOut)
	assert.Contains(t, errOut, "warning: 1 strings of case")
	files := datasetFiles(t, root)
	derived, err := loadCase(strings.TrimSpace(out), root)
	require.NoError(t, err)
	assert.Equal(t, "weather \uFFFDservice down", derived.Steps[2].Error)
	assert.JSONEq(t, `{"step":2,"edit":"tool_error","value":"weather \uFFFDservice down"}`, derived.Metadata["mutation"])

	for _, text := range []string{"weather \xff\xfeservice down", "weather \uFFFDservice down"} {
		edit[5] = text
		code, again, errOut := run(t, edit...)
		require.Equal(t, ExitOK, code, errOut)
		assert.Equal(t, out, again, "%q: the id of the text as stored", text)
		assert.Contains(t, errOut, "is already in "+root, "%q", text)
		assert.Equal(t, files, datasetFiles(t, root), "%q: one row, nothing written again", text)
	}
}
