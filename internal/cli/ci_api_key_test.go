package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/internal/testfixtures"
)

// The OpenAI and Anthropic SDKs refuse to start without an API key, and a CI job replaying a
// dataset has none (nor needs one): an agent run as it is, with no key in its environment,
// still replays. A key of the user's own is passed on unchanged (hybrid mode forwards it).
func TestCIGivesAnAgentWithoutAnAPIKeyAPlaceholder(t *testing.T) {
	root, _, _ := ciSetup(t)
	t.Setenv("RUN", filepath.Join(testfixtures.Dir(), testfixtures.OTelEvents))
	for _, key := range []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY"} {
		t.Setenv(key, "") // restored after the test
		require.NoError(t, os.Unsetenv(key))
	}
	needsKeys := `test -n "$OPENAI_API_KEY" || { echo "OpenAIError: Missing credentials" >&2; exit 1; }
test -n "$ANTHROPIC_API_KEY" || { echo "Could not resolve authentication method" >&2; exit 1; }
` + replayAgent
	code, _, errOut := run(t, "ci", "--dataset", root, "--", "sh", "-c", needsKeys)
	require.Equal(t, ExitOK, code, errOut)

	t.Setenv("OPENAI_API_KEY", "sk-users-own")
	code, _, errOut = run(t, "ci", "--dataset", root, "--", "sh", "-c", `test "$OPENAI_API_KEY" = sk-users-own
`+replayAgent)
	require.Equal(t, ExitOK, code, errOut)
}
