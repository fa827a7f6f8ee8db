package cli

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/internal/testdataset"
	"github.com/reprise-dev/reprise/internal/testfixtures"
)

// An edit is text the user gives (a tool result or an error copied from production): the new
// case is written into the dataset, whose every column holds scrubbed content, so the edit is
// scrubbed as the collector scrubs what it records. Nothing of it reaches a Parquet value: the
// edited step, the case's tool calls, its steps dataset row or the mutation in its metadata.
func TestMutateScrubsTheEdit(t *testing.T) {
	t.Setenv(scrubKeyVar, "mutate-test-key")
	root, cases := fixtureDataset(t, testfixtures.OTelEvents)
	const key, mail, password = "AKIAZ7PL4NT3DK3Y6XQW", "planted.user@acme-corp.io", "Pl4ntedPassw0rdZq"
	for _, edit := range [][]string{
		{"--tool-result", `{"note": "aws ` + key + ` mail ` + mail + `", "db": "password=` + password + `"}`},
		{"--tool-error", "connect failed: password=" + password + " for " + mail + " with " + key},
		{"--response", `"ask ` + mail + ` for the key ` + key + `"`},
	} {
		step := "2"
		if edit[0] == "--response" {
			step = "3"
		}
		code, out, errOut := run(t, append([]string{"mutate", cases[0].CaseID, "--step", step, "--dataset", root}, edit...)...)
		require.Equal(t, ExitOK, code, errOut)
		derived, err := loadCase(strings.TrimSpace(out), root)
		require.NoError(t, err)
		assert.Contains(t, derived.Metadata["mutation"], "secret:", "the edit as recorded is the scrubbed one")
	}
	values, rows := testdataset.DecodedValues(t, root)
	require.Positive(t, rows)
	for _, secret := range []string{key, mail, password} {
		assert.False(t, strings.Contains(string(values), secret), "%s in a Parquet value of the dataset", secret)
	}
}
