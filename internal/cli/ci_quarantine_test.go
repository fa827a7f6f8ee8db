package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/replaycase"
)

// A replayed run that the processor quarantined is evidence the harness could not take whole
// (here a token count that cannot be right, read as no count): its diff showed only
// usage_changed, which does not fail by default, and the case passed.
func TestCIFailsWhenTheReplayedRunIsQuarantined(t *testing.T) {
	root, cases, out := ciSetup(t)
	report := filepath.Join(out, "report.json")
	dir := t.TempDir()
	src := filepath.Join(testfixtures.Dir(), testfixtures.OTelEvents)
	for _, f := range []string{"logs.json", "traces.json"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		require.NoError(t, err)
		s := string(b)
		if f == "traces.json" {
			const count = `{"key":"gen_ai.usage.input_tokens","value":{"intValue":79}}`
			require.Contains(t, s, count)
			s = strings.Replace(s, count, `{"key":"gen_ai.usage.input_tokens","value":{"intValue":-79}}`, 1)
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), []byte(s), 0o600))
	}
	t.Setenv("RUN", dir)
	code, _, errOut := run(t, "ci", "--dataset", root, "--json", report, "--", "sh", "-c", replayAgent)
	assert.Equal(t, ExitChanged, code, errOut)
	rep := readCIReport(t, report)
	require.Len(t, rep.Results, 1)
	r := rep.Results[0]
	assert.Equal(t, outcomeFailed, r.Outcome, "%+v", r)
	assert.Empty(t, r.Failing, "no finding fails it: the quarantine does")
	assert.Contains(t, r.Message, "the replayed run was quarantined (invalid_usage)")
	assert.Equal(t, cases[0].CaseID, r.CaseID)
}

// The default selection replays accepted cases only: a quarantined recording (not recorded
// whole) cannot be compared. The gate may pass on the others, but must say which cases of the
// selection it did not check and how to replay them, not leave them out in silence.
func TestCISaysWhichQuarantinedCasesItDidNotReplay(t *testing.T) {
	Factories = testFactories
	root, cases := fixtureDataset(t, testfixtures.OTelEvents, testfixtures.OTelNoContent)
	var quarantined *replaycase.Case
	for _, c := range cases {
		if c.Status == replaycase.StatusQuarantined {
			quarantined = c
		}
	}
	require.NotNil(t, quarantined)
	repo := filepath.Join(testfixtures.Dir(), "..", "..")
	t.Setenv("REQUEST", filepath.Join(repo, "testdata", "requests", "weather-first-call.json"))
	t.Setenv("RUN", filepath.Join(testfixtures.Dir(), testfixtures.OTelEvents))
	code, _, errOut := run(t, "ci", "--dataset", root, "--", "sh", "-c", replayAgent)
	assert.Equal(t, ExitOK, code, errOut)
	assert.Contains(t, errOut, "1 quarantined cases not replayed ("+quarantined.CaseID+"): --status all replays them")

	// A selection of quarantined cases only fails (nothing was checked), and says why.
	onlyQuarantined, _ := fixtureDataset(t, testfixtures.OTelNoContent)
	code, _, errOut = run(t, "ci", "--dataset", onlyQuarantined, "--", "true")
	assert.Equal(t, ExitError, code, errOut)
	assert.Contains(t, errOut, "1 quarantined cases not replayed (")

	// Another filter that leaves it out (here --agent) leaves it unmentioned.
	code, _, errOut = run(t, "ci", "--dataset", root, "--agent", cases[0].AgentName+"-other", "--", "true")
	assert.Equal(t, ExitError, code, errOut)
	assert.NotContains(t, errOut, "quarantined case")
}
