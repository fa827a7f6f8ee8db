package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/internal/testfixtures"
)

// swallowingAgent first makes a model call the recording does not have ($CHANGED), sees the
// replay server's 404, swallows it and falls back to the recorded question (replayAgent): the
// run it emits is the recording's, so its diff shows nothing.
const swallowingAgent = `curl -sS "$OPENAI_BASE_URL/chat/completions" -H 'Content-Type: application/json' -d @"$CHANGED" | grep -q not_found_error
` + replayAgent

// repeatingAgent runs the recorded run (replayAgent), then makes its first call again in the
// run's replay session: the recording has no call left to answer it with. It swallows the 404.
const repeatingAgent = replayAgent + `curl -sS "$OPENAI_BASE_URL/chat/completions" -H 'Content-Type: application/json' -H "X-Replay-Session: $REPRISE_REPLAY_SESSION" -d @"$REQUEST" >&2
`

// sessionlessRepeatingAgent is repeatingAgent sending neither X-Replay-Session nor traceparent,
// as a plain SDK client does: no request names a session.
const sessionlessRepeatingAgent = replayAgent + `curl -sS "$OPENAI_BASE_URL/chat/completions" -H 'Content-Type: application/json' -d @"$REQUEST" >&2
`

// changedRequest writes the recorded first request with another question and points $CHANGED
// at it.
func changedRequest(t *testing.T) {
	b, err := os.ReadFile(os.Getenv("REQUEST"))
	require.NoError(t, err)
	s := strings.Replace(string(b), "What is the weather in Paris today?", "What is the weather in Lyon today?", 1)
	require.NotEqual(t, string(b), s)
	file := filepath.Join(t.TempDir(), "changed.json")
	require.NoError(t, os.WriteFile(file, []byte(s), 0o600))
	t.Setenv("CHANGED", file)
}

// An agent that swallows a strict replay miss and emits a run just like the recording made a
// call the recording never had: ci fails the case with a replay_miss finding that names where
// the call differs (paths and types, no values), in every report. A policy may allow it.
func TestCIFailsAReplayMissTheAgentSwallowed(t *testing.T) {
	root, cases, out := ciSetup(t)
	changedRequest(t)
	t.Setenv("RUN", filepath.Join(testfixtures.Dir(), testfixtures.OTelEvents))
	junit, report, md := filepath.Join(out, "junit.xml"), filepath.Join(out, "report.json"), filepath.Join(out, "report.md")

	code, _, errOut := run(t, "ci", "--dataset", root, "--junit", junit, "--json", report, "--markdown", md, "--", "sh", "-c", swallowingAgent)
	require.Equal(t, ExitChanged, code, errOut)
	rep := readCIReport(t, report)
	require.Len(t, rep.Results, 1)
	r := rep.Results[0]
	assert.Equal(t, outcomeFailed, r.Outcome)
	assert.Equal(t, 0, r.ExitCode, "the agent itself succeeded")
	assert.Equal(t, "1 findings: replay_miss", r.Message)
	require.Len(t, r.Failing, 1)
	f := r.Failing[0]
	assert.Equal(t, replayMiss, f.Type)
	assert.Equal(t, pointReplay, f.DecisionPoint)
	assert.Equal(t, "model call refused (prompt_changed) at messages[1].content[0].text: differs from the next recorded one of case "+cases[0].CaseID, f.Detail)
	assert.Equal(t, r.Failing, r.ReplayMisses)
	for _, file := range []string{junit, report, md} {
		b, err := os.ReadFile(file)
		require.NoError(t, err)
		assert.Contains(t, string(b), "replay_miss", file)
		assert.Contains(t, string(b), "messages[1].content[0].text", file)
		assert.NotContains(t, string(b), "Lyon", "%s: no requested value", file)
	}

	// A policy that allows replay misses passes the case; the JSON report still lists them.
	policy := filepath.Join(out, "policy.yaml")
	require.NoError(t, os.WriteFile(policy, []byte("allow:\n  - type: replay_miss\n"), 0o600))
	code, _, errOut = run(t, "ci", "--dataset", root, "--json", report, "--policy", policy, "--", "sh", "-c", swallowingAgent)
	require.Equal(t, ExitOK, code, errOut)
	r = readCIReport(t, report).Results[0]
	assert.Empty(t, r.Failing)
	assert.Len(t, r.ReplayMisses, 1)
}

// ciOfRecordedRun runs ci over the otel-events case with agent, which emits the recorded run,
// checks its exit code and returns the case's result.
func ciOfRecordedRun(t *testing.T, agent string, want int) caseResult {
	root, _, out := ciSetup(t)
	t.Setenv("RUN", filepath.Join(testfixtures.Dir(), testfixtures.OTelEvents))
	report := filepath.Join(out, "report.json")
	code, _, errOut := run(t, "ci", "--dataset", root, "--json", report, "--", "sh", "-c", agent)
	require.Equal(t, want, code, errOut)
	b, err := os.ReadFile(report)
	require.NoError(t, err)
	assert.Equal(t, want == ExitChanged, strings.Contains(string(b), `"replay_misses"`), "the field is there only with a refusal")
	rep := readCIReport(t, report)
	require.Len(t, rep.Results, 1)
	return rep.Results[0]
}

// A call made more often than the recording made it, in the run's replay session, is refused
// too: the agent that swallows it fails the case with model_call_added named.
func TestCIFailsACallMadeMoreOftenThanRecorded(t *testing.T) {
	r := ciOfRecordedRun(t, repeatingAgent, ExitChanged)
	require.Len(t, r.Failing, 1, "%+v", r)
	assert.Equal(t, replayMiss, r.Failing[0].Type)
	assert.Contains(t, r.Failing[0].Detail, "model call refused (model_call_added): made more often than recorded")
}

// An agent that names no replay session is in the run's session all the same (the harness's
// sessions.default_id): the call it repeats is refused as a repeat, not answered again as if
// it were the run's first.
func TestCIFailsACallRepeatedWithoutASession(t *testing.T) {
	r := ciOfRecordedRun(t, sessionlessRepeatingAgent, ExitChanged)
	require.Len(t, r.Failing, 1, "%+v", r)
	assert.Equal(t, replayMiss, r.Failing[0].Type)
	assert.Contains(t, r.Failing[0].Detail, "model call refused (model_call_added): made more often than recorded")
}

// A run that makes only recorded calls has no replay miss and passes.
func TestCIPassesARunWithoutReplayMisses(t *testing.T) {
	r := ciOfRecordedRun(t, replayAgent, ExitOK)
	assert.Equal(t, outcomePassed, r.Outcome, "%+v", r)
	assert.Empty(t, r.ReplayMisses)
}

// A run that emitted no case still fails on its replay misses, and the reports list them.
func TestCIReportsReplayMissesOfACommandThatEmittedNoRun(t *testing.T) {
	root, _, out := ciSetup(t)
	changedRequest(t)
	md := filepath.Join(out, "report.md")
	code, _, errOut := run(t, "ci", "--dataset", root, "--markdown", md, "--", "sh", "-c",
		`curl -sS "$OPENAI_BASE_URL/chat/completions" -H 'Content-Type: application/json' -d @"$CHANGED" >&2`)
	require.Equal(t, ExitChanged, code, errOut)
	b, err := os.ReadFile(md)
	require.NoError(t, err)
	assert.Contains(t, string(b), "emitted no agent run (is its OpenTelemetry SDK exporting to OTEL_EXPORTER_OTLP_ENDPOINT?); 1 findings: replay_miss")
	assert.Contains(t, string(b), "| `replay_miss` |")
}
