package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/casediff"
	"github.com/reprise-dev/reprise/internal/testdataset"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/internal/testpipeline"
	"github.com/reprise-dev/reprise/replaycase"
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
}
