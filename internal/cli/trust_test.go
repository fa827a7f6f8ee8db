package cli

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/replaycase"
)

// A --case that names no selected case must not be dropped silently: the gate would pass on
// the cases that remain while the one the user asked for never ran.
func TestCIRefusesACaseItDoesNotSelect(t *testing.T) {
	root, cases, _ := ciSetup(t)
	t.Setenv("RUN", filepath.Join(testfixtures.Dir(), testfixtures.OTelEvents))
	code, _, errOut := run(t, "ci", "--dataset", root, "--case", cases[0].CaseID, "--case", "no-such-case", "--", "sh", "-c", replayAgent)
	assert.Equal(t, ExitError, code, errOut)
	assert.Contains(t, errOut, `--case "no-such-case"`)

	// The only --case, mistyped, is named too: the selection it empties is that case alone
	// (the error said only "no case … matches the selection").
	code, _, errOut = run(t, "ci", "--dataset", root, "--case", "no-such-case", "--", "true")
	assert.Equal(t, ExitError, code, errOut)
	assert.Contains(t, errOut, `--case "no-such-case"`)

	// A case that exists but is not selected (an accepted one under --status quarantined) is the same.
	code, _, errOut = run(t, "ci", "--dataset", root, "--case", cases[0].CaseID, "--status", "quarantined", "--", "true")
	assert.Equal(t, ExitError, code, errOut)
	assert.Contains(t, errOut, `--case "`+cases[0].CaseID+`"`)
}

// An empty --case (e.g. --case "$id" after a failed command substitution) is a prefix of every
// id: it must be refused, not widen the selection to the whole dataset.
func TestSelectionRefusesAnEmptyCase(t *testing.T) {
	root, _ := fixtureDataset(t, testfixtures.OTelEvents, testfixtures.OTelNoContent)
	code, out, errOut := run(t, "ls", "--dataset", root, "--case", "")
	assert.Equal(t, ExitError, code, out)
	assert.Contains(t, errOut, "--case")
}

// A misspelt policy key must be an error: an allow rule whose "type" is misspelt has no type and
// excuses every finding, so the gate passes whatever changed.
func TestPolicyRefusesUnknownKeysAndCatchAllRules(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ yaml, want string }{
		{"allow:\n  - typ: answer_changed\n", "typ"},
		{"fail-on: [answer_changed]\n", "fail-on"},
		{"allow:\n  - {}\n", "allow[0]"},
	} {
		file := filepath.Join(dir, "policy.yaml")
		require.NoError(t, os.WriteFile(file, []byte(c.yaml), 0o600))
		_, err := loadPolicy(file)
		if assert.Error(t, err, c.yaml) {
			assert.Contains(t, err.Error(), c.want, c.yaml)
		}
	}
	file := filepath.Join(dir, "policy.yaml")
	require.NoError(t, os.WriteFile(file, []byte("fail_on: [answer_changed]\nallow:\n  - type: answer_changed\n    case: a6a47648c27e9022e56e07792c07b190\n"), 0o600))
	_, err := loadPolicy(file)
	assert.NoError(t, err, "a valid policy still loads")
}

// The reports are replaced through a temporary file and a rename: a CI step reading junit.xml
// never sees a truncated or half-written file in place of the previous one.
func TestCIReportsAreReplacedAtomically(t *testing.T) {
	root, _, out := ciSetup(t)
	t.Setenv("RUN", filepath.Join(testfixtures.Dir(), testfixtures.OTelEvents))
	paths := []string{filepath.Join(out, "junit.xml"), filepath.Join(out, "report.json"), filepath.Join(out, "report.md")}
	before := make([]os.FileInfo, len(paths))
	for i, p := range paths {
		require.NoError(t, os.WriteFile(p, []byte("previous report"), 0o644))
		var err error
		before[i], err = os.Stat(p)
		require.NoError(t, err)
	}
	code, _, errOut := run(t, "ci", "--dataset", root, "--junit", paths[0], "--json", paths[1], "--markdown", paths[2], "--", "sh", "-c", replayAgent)
	require.Equal(t, ExitOK, code, errOut)
	for i, p := range paths {
		after, err := os.Stat(p)
		require.NoError(t, err)
		assert.False(t, os.SameFile(before[i], after), "%s was rewritten in place, not replaced by a rename", p)
		assert.Equal(t, os.FileMode(0o644), after.Mode().Perm(), p)
	}
	entries, err := os.ReadDir(out)
	require.NoError(t, err)
	assert.Len(t, entries, len(paths), "no temporary file left behind")
}

// --timeout bounds a run even when COMMAND leaves a child holding its output open (a shell
// running the agent): the harness must not wait for the child.
func TestCITimeoutBoundsACommandWhoseChildKeepsItsOutput(t *testing.T) {
	root, _, _ := ciSetup(t)
	pidFile := childPidFile(t)
	start := time.Now()
	code, _, errOut := run(t, "ci", "--dataset", root, "--timeout", "1s", "--", "sh", "-c", `sleep 40 & echo $! > "$0"; wait`, pidFile)
	took := time.Since(start)
	assert.Equal(t, ExitChanged, code, errOut)
	assert.Contains(t, errOut, "did not finish within 1s")
	assert.Less(t, took, 25*time.Second, "the run was not bounded by --timeout")
}

// --version becomes part of the installed file name: it must not lead out of --to.
func TestPricesUpdateRefusesAVersionThatIsNotAFileName(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "prices.json")
	require.NoError(t, os.WriteFile(src, []byte(smallTable), 0o600))
	to := filepath.Join(dir, "a", "installed")
	for _, v := range []string{"x/../../../escaped", "2026/12/01", ".."} {
		code, _, errOut := run(t, "prices", "update", "--from", src, "--to", to, "--version", v)
		assert.Equal(t, ExitError, code, "%s: %s", v, errOut)
		assert.Contains(t, errOut, "--version", v)
	}
	_, err := os.Stat(filepath.Join(dir, "escaped.json"))
	assert.True(t, os.IsNotExist(err), "nothing may be written outside --to")
	_, err = os.Stat(to)
	assert.True(t, os.IsNotExist(err), "nothing installed")
}

// --width below what truncation can honour (room for one character and the ellipsis) was
// ignored: every value printed in full, whatever the user asked for.
func TestShowRefusesAWidthItCannotHonour(t *testing.T) {
	root, cases := fixtureDataset(t, testfixtures.OTelEvents)
	for _, w := range []string{"0", "-5", "3"} {
		code, _, errOut := run(t, "show", cases[0].CaseID, "--dataset", root, "--width", w)
		assert.Equal(t, ExitError, code, w)
		assert.Contains(t, errOut, "--width", w)
	}
	code, out, errOut := run(t, "show", cases[0].CaseID, "--dataset", root, "--width", "4")
	require.Equal(t, ExitOK, code, errOut)
	assert.Contains(t, out, "answer: Ans…")
}

// An import whose publish was interrupted after its batch was committed leaves that batch in
// staging, published in part. Retrying must count the committed cases as present: the writer
// publishes them when it recovers, and writing them again doubled their rows.
func TestImportRetryAfterAnInterruptedPublishAddsEachCaseOnce(t *testing.T) {
	src, cases := fixtureDataset(t, testfixtures.OTelEvents, testfixtures.OTelNoContent)
	require.Len(t, cases, 2)
	dir := t.TempDir()
	file, dst := filepath.Join(dir, "export.parquet"), filepath.Join(dir, "dst")
	code, _, errOut := run(t, "export", cases[0].CaseID, cases[1].CaseID, "--dataset", src, "--out", file)
	require.Equal(t, ExitOK, code, errOut)

	// A file where the accepted case's partition directory goes: steps/ and quarantine/ are
	// published, the rename into cases/ fails, the batch stays committed in staging.
	var accepted *replaycase.Case
	for _, c := range cases {
		if c.Status == replaycase.StatusAccepted {
			accepted = c
		}
	}
	require.NotNil(t, accepted)
	block := filepath.Join(dst, dataset.Cases, dataset.PartitionKey+"="+dataset.Partition(accepted, time.Now()))
	require.NoError(t, os.MkdirAll(filepath.Dir(block), 0o755))
	require.NoError(t, os.WriteFile(block, nil, 0o644))
	code, _, errOut = run(t, "import", file, "--dataset", dst)
	require.Equal(t, ExitError, code, errOut)

	require.NoError(t, os.Remove(block))
	code, out, errOut := run(t, "import", file, "--dataset", dst)
	require.Equal(t, ExitOK, code, errOut)
	assert.Contains(t, out, "imported 0 cases", "the first attempt committed both")
	files, err := dataset.NewLister(dst, dataset.Cases, dataset.Quarantine).Next()
	require.NoError(t, err)
	rows := map[string]int{}
	for _, f := range files {
		entries, err := dataset.ReadIndex(f.Path)
		require.NoError(t, err)
		for _, e := range entries {
			rows[e.CaseID]++
		}
	}
	assert.Equal(t, map[string]int{cases[0].CaseID: 1, cases[1].CaseID: 1}, rows, "each case once")
}

// An imported case whose strings are not valid UTF-8 is stored repaired (U+FFFD in place of
// each invalid sequence): the import says so instead of reporting a plain success.
func TestImportSaysWhenItRepairedStrings(t *testing.T) {
	_, cases := fixtureDataset(t, testfixtures.OTelEvents)
	rows := []dataset.CaseRow{*cases[0]}
	rows[0].AgentName = "weather\xffbot"
	file := filepath.Join(t.TempDir(), "export.parquet")
	require.NoError(t, dataset.WriteCaseFile(file, "zstd", rows))
	code, out, errOut := run(t, "import", file, "--dataset", filepath.Join(t.TempDir(), "data"))
	require.Equal(t, ExitOK, code, errOut)
	assert.Contains(t, out, "imported 1 cases")
	assert.Contains(t, errOut, "warning: 1 strings of the cases written were not valid UTF-8")
}

// A command that emits more than one run has one compared; the report names the others and
// says so, instead of passing on one run with the rest unseen.
func TestCINamesTheRunsItDidNotCompare(t *testing.T) {
	root, _, out := ciSetup(t)
	report := filepath.Join(out, "report.json")
	t.Setenv("RUN", filepath.Join(testfixtures.Dir(), testfixtures.OTelEvents))
	t.Setenv("SECOND_RUN", filepath.Join(testfixtures.Dir(), testfixtures.Traceloop))
	t.Setenv("AGENT", replayAgent)
	t.Setenv("EMIT", emitRun) // the second run makes no model call: the recording has one only
	code, _, errOut := run(t, "ci", "--dataset", root, "--json", report, "--", "sh", "-c", `sh -c "$AGENT" && RUN="$SECOND_RUN" sh -c "$EMIT"`)
	require.NotEqual(t, ExitError, code, errOut)
	rep := readCIReport(t, report)
	require.Len(t, rep.Results, 1)
	r := rep.Results[0]
	require.Len(t, r.OtherRuns, 1, "%+v", r)
	assert.NotEqual(t, r.NewCaseID, r.OtherRuns[0])
	assert.Contains(t, r.Message, "also emitted 1 other runs, not compared")
	assert.Contains(t, errOut, "not compared", "the progress line says it")
}

// childPidFile is a file a command writes its child's pid to; the child is killed when the
// test ends, whatever reprise ci did to it (nothing else would).
func childPidFile(t *testing.T) string {
	file := filepath.Join(t.TempDir(), "child.pid")
	t.Cleanup(func() {
		if pid, err := readPid(file); err == nil {
			if p, err := os.FindProcess(pid); err == nil {
				_ = p.Kill()
			}
		}
	})
	return file
}

// readPid reads the pid a command wrote to file.
func readPid(file string) (int, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}
