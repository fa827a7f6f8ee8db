package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Everywhere else a case is named by a unique prefix of its id, so a release owner wrote one in
// an allow rule ("case: a6a47648"); the rule compared whole ids, matched no case and excused
// nothing, and the gate failed on the drift the rule was written to allow.
func TestPolicyRefusesAnAllowCaseThatIsNoWholeID(t *testing.T) {
	file := filepath.Join(t.TempDir(), "policy.yaml")
	for _, id := range []string{"a6a47648", "A6A47648C27E9022E56E07792C07B190"} {
		require.NoError(t, os.WriteFile(file, []byte("allow:\n  - type: cost_changed\n    case: "+id+"\n"), 0o600))
		p, err := loadPolicy(file)
		if assert.Error(t, err, "loaded %+v", p) {
			assert.Contains(t, err.Error(), `allow[0].case "`+id+`"`)
			assert.Contains(t, err.Error(), "32 lower-case hex digits")
		}
	}
	require.NoError(t, os.WriteFile(file, []byte("allow:\n  - type: cost_changed\n    case: a6a47648c27e9022e56e07792c07b190\n"), 0o600))
	_, err := loadPolicy(file)
	require.NoError(t, err)
}
