package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	junitreader "github.com/joshdk/go-junit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/exporter/nopexporter"
	"go.opentelemetry.io/collector/otelcol"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/service/telemetry/otelconftelemetry"

	"github.com/reprise-dev/reprise/casediff"
	"github.com/reprise-dev/reprise/exporter/replayparquetexporter"
	"github.com/reprise-dev/reprise/internal/testdataset"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/internal/testpipeline"
	"github.com/reprise-dev/reprise/processor/replaycaseprocessor"
	"github.com/reprise-dev/reprise/replaycase"
	"github.com/reprise-dev/reprise/replayext"
)

// fixtureDataset records the fixture runs into a dataset root through the processor and the
// exporter, and returns the root and the cases.
func fixtureDataset(t *testing.T, runs ...string) (string, []*replaycase.Case) {
	t.Helper()
	root := t.TempDir()
	w := testdataset.Writer(t, root, "zstd")
	cases := testpipeline.Run(t, w, runs...)
	require.NoError(t, w.Shutdown(context.Background()))
	return root, cases
}

func run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	fn, ok := Lookup(args[0])
	require.True(t, ok, args[0])
	var o, e bytes.Buffer
	code = fn(args[1:], &o, &e)
	return code, o.String(), e.String()
}

func caseByService(cases []*replaycase.Case, service string) *replaycase.Case {
	for _, c := range cases {
		if c.Provenance.ServiceName == service {
			return c
		}
	}
	return nil
}

func TestDiffTwoCasesOfADataset(t *testing.T) {
	root, cases := fixtureDataset(t, testfixtures.OTelEvents, testfixtures.Traceloop)
	require.Len(t, cases, 2)
	a, b := cases[0], cases[1]

	code, out, errOut := run(t, "diff", a.CaseID, b.CaseID[:8], "--dataset", root, "--format", "json")
	require.Equal(t, ExitChanged, code, errOut)
	var r casediff.Report
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	assert.Equal(t, casediff.Schema, r.Schema)
	assert.Equal(t, a.CaseID, r.A.CaseID)
	assert.Equal(t, b.CaseID, r.B.CaseID, "a unique prefix names the case")
	assert.Equal(t, casediff.Compare(a, b).Counts, r.Counts, "the dataset round trip changes nothing the diff sees")

	code, out, _ = run(t, "diff", a.CaseID, a.CaseID, "--dataset", root)
	assert.Equal(t, ExitOK, code)
	assert.Contains(t, out, "No differences")
}

func TestDiffCaseFiles(t *testing.T) {
	_, cases := fixtureDataset(t, testfixtures.OTelEvents)
	dir := t.TempDir()
	b, err := json.Marshal(cases[0])
	require.NoError(t, err)
	file := filepath.Join(dir, "case.json")
	require.NoError(t, os.WriteFile(file, b, 0o600))
	code, out, errOut := run(t, "diff", file, file, "--dataset", filepath.Join(dir, "none"))
	assert.Equal(t, ExitOK, code, errOut)
	assert.Contains(t, out, cases[0].CaseID)
}

func TestDiffErrors(t *testing.T) {
	root, _ := fixtureDataset(t, testfixtures.OTelEvents)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"diff", "only-one", "--dataset", root}, "want two cases"},
		{[]string{"diff", "zz", "yy", "--dataset", root}, `no case "zz"`},
		{[]string{"diff", "a", "b", "--format", "xml"}, "want json or markdown"},
		{[]string{"diff", "a", "b", "--dataset", filepath.Join(root, "missing")}, "missing"},
	} {
		code, _, errOut := run(t, c.args...)
		assert.Equal(t, ExitError, code, c.args)
		assert.Contains(t, errOut, c.want, c.args)
	}
}

func TestShowPrintsTheTimeline(t *testing.T) {
	root, cases := fixtureDataset(t, testfixtures.OTelEvents, testfixtures.OTelNoContent)
	accepted := caseByService(cases, cases[0].Provenance.ServiceName)
	code, out, errOut := run(t, "show", accepted.CaseID, "--dataset", root, "--width", "200")
	require.Equal(t, ExitOK, code, errOut)
	for _, want := range []string{"weather-bot", "accepted", "get_weather", `"city":"Paris"`, "it is mild in Paris", "214 tokens"} {
		assert.Contains(t, out, want)
	}
	var quarantined *replaycase.Case
	for _, c := range cases {
		if c.Status == replaycase.StatusQuarantined {
			quarantined = c
		}
	}
	require.NotNil(t, quarantined)
	code, out, _ = run(t, "show", quarantined.CaseID, "--dataset", root)
	require.Equal(t, ExitOK, code)
	assert.Contains(t, out, "reason: no_input_messages")
}

func TestLsFilters(t *testing.T) {
	root, cases := fixtureDataset(t, testfixtures.OTelEvents, testfixtures.OTelNoContent)
	require.Len(t, cases, 2)
	code, out, _ := run(t, "ls", "--dataset", root)
	require.Equal(t, ExitOK, code)
	assert.Len(t, strings.Split(strings.TrimSpace(out), "\n"), 3, out)
	code, out, _ = run(t, "ls", "--dataset", root, "--status", "quarantined")
	require.Equal(t, ExitOK, code)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 2, out)
	assert.Contains(t, lines[1], "no_input_messages")
	code, _, errOut := run(t, "ls", "--status", "maybe")
	assert.Equal(t, ExitError, code)
	assert.Contains(t, errOut, "--status")
	code, out, _ = run(t, "ls", "--dataset", root, "--case", "no-such-id", "--case", cases[1].CaseID[:8])
	require.Equal(t, ExitOK, code)
	lines = strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 2, "a --case prefix selects its case: %s", out)
	assert.True(t, strings.HasPrefix(lines[1], cases[1].CaseID), out)
	code, _, errOut = run(t, "ls", "--since", "yesterday")
	assert.Equal(t, ExitError, code)
	assert.Contains(t, errOut, `-since: want YYYY-MM-DD or RFC 3339, got "yesterday"`)
	code, out, _ = run(t, "ls", "--dataset", root, "--since", "2999-01-01")
	require.Equal(t, ExitOK, code)
	assert.Len(t, strings.Split(strings.TrimSpace(out), "\n"), 1, "only the header: every case started before 2999")
}

// testFactories are the components `reprise ci` needs, as cmd/reprise provides them.
func testFactories() (otelcol.Factories, error) {
	var err error
	f := otelcol.Factories{Telemetry: otelconftelemetry.NewFactory()}
	if f.Receivers, err = otelcol.MakeFactoryMap(otlpreceiver.NewFactory()); err != nil {
		return f, err
	}
	if f.Processors, err = otelcol.MakeFactoryMap(replaycaseprocessor.NewFactory()); err != nil {
		return f, err
	}
	if f.Exporters, err = otelcol.MakeFactoryMap(replayparquetexporter.NewFactory(), nopexporter.NewFactory()); err != nil {
		return f, err
	}
	f.Extensions, err = otelcol.MakeFactoryMap(replayext.NewFactory())
	return f, err
}

// replayAgent is a stand-in agent for the harness: a shell script that asks the replay server
// the recorded first question, checks the answer, and emits the recorded run (the fixture's
// telemetry) to the OTLP endpoint it was given, as an instrumented agent would.
const replayAgent = `set -e
test -s "$REPRISE_CASE_FILE"
grep -q '"question": "What is the weather in Paris today?"' "$REPRISE_CASE_FILE"
curl -sS "$OPENAI_BASE_URL/chat/completions" -H 'Content-Type: application/json' -d @"$REQUEST" | grep -q get_weather
` + emitRun

// emitRun emits the run in $RUN (the fixture's telemetry) to the OTLP endpoint, as an
// instrumented agent would, making no model call.
const emitRun = `set -e
for signal in logs traces; do
  test -f "$RUN/$signal.json" || continue
  code=$(curl -sS -o /dev/stderr -w '%{http_code}' "$OTEL_EXPORTER_OTLP_ENDPOINT/v1/$signal" -H 'Content-Type: application/json' -d @"$RUN/$signal.json")
  test "$code" = 200 || { echo "$signal: HTTP $code" >&2; exit 1; }
done
`

// ciSetup records the otel-events run into a dataset and points replayAgent at its recorded
// first request; it returns the dataset root, its cases and a directory for the reports.
func ciSetup(t *testing.T) (root string, cases []*replaycase.Case, out string) {
	Factories = testFactories
	root, cases = fixtureDataset(t, testfixtures.OTelEvents)
	require.Len(t, cases, 1)
	repo := filepath.Join(testfixtures.Dir(), "..", "..")
	t.Setenv("REQUEST", filepath.Join(repo, "testdata", "requests", "weather-first-call.json"))
	return root, cases, t.TempDir()
}

// readCIReport reads the report `reprise ci --json` wrote at path.
func readCIReport(t *testing.T, path string) ciReport {
	t.Helper()
	var rep ciReport
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &rep))
	return rep
}

func TestCIReplaysEachCaseThroughTheCommand(t *testing.T) {
	root, cases, out := ciSetup(t)
	junit, report := filepath.Join(out, "junit.xml"), filepath.Join(out, "report.json")

	t.Setenv("RUN", filepath.Join(testfixtures.Dir(), testfixtures.OTelEvents))
	code, _, errOut := run(t, "ci", "--dataset", root, "--junit", junit, "--json", report, "--", "sh", "-c", replayAgent)
	require.Equal(t, ExitOK, code, errOut)
	rep := readCIReport(t, report)
	require.Len(t, rep.Results, 1)
	assert.Equal(t, outcomePassed, rep.Results[0].Outcome, "%+v", rep.Results[0])
	assert.Equal(t, cases[0].CaseID, rep.Results[0].NewCaseID, "the same run again is the same case")

	// The same agent emitting another instrumentation's recording of the run: that one also
	// records the tools offered to each model call, which fails the case (model_config_changed
	// on steps[*].tool_definitions); a policy that allows them leaves only latency, which does
	// not fail by default.
	t.Setenv("RUN", filepath.Join(testfixtures.Dir(), testfixtures.Traceloop))
	code, _, errOut = run(t, "ci", "--dataset", root, "--json", report, "--", "sh", "-c", replayAgent)
	assert.Equal(t, ExitChanged, code, errOut)
	assert.Contains(t, readCIReport(t, report).Results[0].Message, "model_config_changed")
	policy := filepath.Join(out, "policy.yaml")
	require.NoError(t, os.WriteFile(policy, []byte("allow:\n  - type: model_config_changed\n    path: \"steps[*].tool_definitions\"\n"), 0o600))
	code, _, errOut = run(t, "ci", "--dataset", root, "--json", report, "--policy", policy, "--", "sh", "-c", replayAgent)
	assert.Equal(t, ExitOK, code, errOut)

	// A command that emits nothing fails the case (exit 1), and says why.
	code, _, errOut = run(t, "ci", "--dataset", root, "--junit", junit, "--", "true")
	assert.Equal(t, ExitChanged, code)
	assert.Contains(t, errOut, "emitted no agent run")
	x, err := os.ReadFile(junit)
	require.NoError(t, err)
	assert.Contains(t, string(x), `<failure message="the command emitted no agent run`)
}

// changedRun copies the otel-events recording with the answer (and, when prompt is true, the
// system prompt) changed, as a changed agent would have emitted it.
func changedRun(t *testing.T, prompt bool) string {
	dir := t.TempDir()
	src := filepath.Join(testfixtures.Dir(), testfixtures.OTelEvents)
	for _, f := range []string{"logs.json", "traces.json"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		require.NoError(t, err)
		s := strings.ReplaceAll(string(b), "it is mild in Paris", "it is cold in Paris")
		if prompt {
			s = strings.ReplaceAll(s, "You are a weather assistant.", "You are a terse weather assistant.")
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), []byte(s), 0o600))
	}
	return dir
}

func TestCIFailsWithTheFindingsOfAChangedAgent(t *testing.T) {
	root, _, out := ciSetup(t)
	junit, report, md := filepath.Join(out, "junit.xml"), filepath.Join(out, "report.json"), filepath.Join(out, "report.md")

	t.Setenv("RUN", changedRun(t, true))
	code, _, errOut := run(t, "ci", "--dataset", root, "--junit", junit, "--json", report, "--markdown", md, "--", "sh", "-c", replayAgent)
	require.Equal(t, ExitChanged, code, errOut)
	rep := readCIReport(t, report)
	require.Len(t, rep.Results, 1)
	types := map[casediff.FindingType]bool{}
	for _, f := range rep.Results[0].Failing {
		types[f.Type] = true
	}
	assert.Equal(t, map[casediff.FindingType]bool{casediff.PromptChanged: true, casediff.AnswerChanged: true}, types)
	// A JUnit reader library reads the report as one failed test naming the findings.
	suites, err := junitreader.IngestFile(junit)
	require.NoError(t, err)
	require.Len(t, suites, 1)
	require.Len(t, suites[0].Tests, 1)
	tc := suites[0].Tests[0]
	assert.Equal(t, junitreader.StatusFailed, tc.Status)
	assert.Equal(t, rep.Results[0].CaseID, tc.Name)
	assert.Contains(t, tc.Error.Error(), "prompt_changed")
	assert.Equal(t, 1, suites[0].Totals.Failed)
	mdText, err := os.ReadFile(md)
	require.NoError(t, err)
	assert.Contains(t, string(mdText), "it is cold in Paris")

	// A policy that allows the answer to change still fails on the prompt; one that also allows
	// the prompt passes.
	policy := filepath.Join(out, "policy.yaml")
	require.NoError(t, os.WriteFile(policy, []byte("allow:\n  - type: answer_changed\n"), 0o600))
	code, _, _ = run(t, "ci", "--dataset", root, "--policy", policy, "--", "sh", "-c", replayAgent)
	assert.Equal(t, ExitChanged, code)
	require.NoError(t, os.WriteFile(policy, []byte("allow:\n  - type: answer_changed\n  - type: prompt_changed\n    path: \"steps[*].input_messages[0]\"\n"), 0o600))
	code, _, errOut = run(t, "ci", "--dataset", root, "--policy", policy, "--", "sh", "-c", replayAgent)
	assert.Equal(t, ExitOK, code, errOut)
	require.NoError(t, os.WriteFile(policy, []byte("fail_on: [no_such_finding]\n"), 0o600))
	code, _, errOut = run(t, "ci", "--dataset", root, "--policy", policy, "--", "true")
	assert.Equal(t, ExitError, code)
	assert.Contains(t, errOut, `unknown finding type "no_such_finding"`)
}
