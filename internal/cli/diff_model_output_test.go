package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/casediff"
	"github.com/reprise-dev/reprise/internal/testfixtures"
)

// A case and a mutation of an intermediate model call's response (step 1: the call that asked
// for the tool; the tool calls and the final answer are the recorded ones) used to diff as "No
// differences", exit 0. The changed output is one model_output_changed on that step, and the
// diff exits 1, as for any difference.
func TestDiffFindsAChangedIntermediateResponse(t *testing.T) {
	root, cases := fixtureDataset(t, testfixtures.OTelEvents)
	orig := cases[0]
	derived := mutateOne(t, root, orig.CaseID, "--step", "1", "--response", `"Let me look that up."`)

	code, out, errOut := run(t, "diff", orig.CaseID, derived.CaseID, "--dataset", root, "--format", "json")
	require.Equal(t, ExitChanged, code, errOut)
	var r casediff.Report
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	assert.Equal(t, map[casediff.FindingType]int{casediff.ModelOutputChanged: 1}, r.Counts, out)
	require.Len(t, r.Findings, 1)
	assert.Equal(t, "steps[1].output_messages", r.Findings[0].PathB)
	assert.Equal(t, []any{map[string]any{"text": "Let me look that up.", "finish_reason": "stop"}}, r.Findings[0].After)

	code, out, errOut = run(t, "diff", orig.CaseID, derived.CaseID, "--dataset", root)
	require.Equal(t, ExitChanged, code, errOut)
	assert.Contains(t, out, "`model_output_changed` | `steps[1].output_messages`")
}

// A changed model output is a secondary finding, as usage and latency are: replay serves the
// recorded output, so it shows only where a live model answered, and the decisions taken on it
// are findings of their own. A policy that lists it fails on it.
func TestModelOutputChangedFailsOnlyWhenListed(t *testing.T) {
	f := casediff.Finding{Type: casediff.ModelOutputChanged, PathA: "steps[1].output_messages", PathB: "steps[1].output_messages"}
	assert.False(t, Policy{}.fails("c1", f), "not failing by default")

	file := filepath.Join(t.TempDir(), "policy.yaml")
	require.NoError(t, os.WriteFile(file, []byte("fail_on: [model_output_changed]\n"), 0o644))
	p, err := loadPolicy(file)
	require.NoError(t, err)
	assert.True(t, p.fails("c1", f))
}

// A mutated case is not a recorded run: its diff against the original says so under the
// header, as `reprise show` does, and so does the JSON report (b.mutation_of).
func TestDiffSaysWhichSideIsAMutation(t *testing.T) {
	root, cases := fixtureDataset(t, testfixtures.OTelEvents)
	orig := cases[0]
	derived := mutateOne(t, root, orig.CaseID, "--step", "1", "--response", `"Let me look that up."`)

	code, out, errOut := run(t, "diff", orig.CaseID, derived.CaseID, "--dataset", root)
	require.Equal(t, ExitChanged, code, errOut)
	assert.Contains(t, out, "B `"+derived.CaseID+"` is a mutation of case `"+orig.CaseID+"`, not a recorded run:")
	assert.NotContains(t, out, "A `"+orig.CaseID+"` is a mutation")

	code, out, errOut = run(t, "diff", orig.CaseID, derived.CaseID, "--dataset", root, "--format", "json")
	require.Equal(t, ExitChanged, code, errOut)
	var r struct {
		A, B map[string]any
	}
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	assert.Equal(t, orig.CaseID, r.B["mutation_of"])
	assert.NotContains(t, r.A, "mutation_of")
}
