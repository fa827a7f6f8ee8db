package casediff

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/callsite"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/replaycase"
)

// firstToolResult finds the first tool result a model call of c was sent: its step, message and
// part.
func firstToolResult(t *testing.T, c *replaycase.Case) (step, msg, part int) {
	t.Helper()
	for i, st := range c.Steps {
		for j, m := range st.InputMessages {
			for k, p := range m.Parts {
				if st.Kind == replaycase.StepLLM && p.Type == "tool_call_response" {
					return i, j, k
				}
			}
		}
	}
	t.Fatal("no tool result sent to a model")
	return
}

// A tool result sent to the model as a failure (Anthropic's is_error) in one run and as a
// success in the other is a tool_result_changed finding on that model call, whether the two
// calls' ids cover is_error (they then differ, and the calls are still paired by position) or
// not (the same id).
func TestChangedToolResultFailureIsFound(t *testing.T) {
	base := fixtureCase(t, testfixtures.OTelEvents)
	i, j, k := firstToolResult(t, base)
	path := fmt.Sprintf("steps[%d].input_messages[%d].parts[%d].is_error", i, j, k)
	for _, covered := range []bool{false, true} {
		a, b := clone(t, base), clone(t, base)
		b.Steps[i].InputMessages[j].Parts[k].Error = true
		if covered {
			for _, c := range []*replaycase.Case{a, b} {
				st := &c.Steps[i]
				req := callsite.FromStep(st)
				req.ToolErrorsRecorded = true
				st.CallSiteFields = req.RecordedFields()
				st.CallSiteID = req.ID(st.CallSiteFields)
			}
			require.NotEqual(t, a.Steps[i].CallSiteID, b.Steps[i].CallSiteID)
		}
		for _, r := range []Report{Compare(a, b), Compare(b, a)} {
			require.Len(t, r.Findings, 1, "covered %v: %+v", covered, r.Findings)
			f := r.Findings[0]
			assert.Equal(t, ToolResultChanged, f.Type)
			assert.Equal(t, PointTools, f.DecisionPoint)
			assert.Equal(t, path, f.PathA)
			assert.Equal(t, path, f.PathB)
		}
		assert.Equal(t, true, Compare(a, b).Findings[0].After)
		assert.Nil(t, Compare(a, b).Findings[0].Before)
	}
}
