package casediff

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/replaycase"
)

// firstLLMStep is the index of the first LLM step of c: in the fixtures, a call that is not
// the last (its answer is a tool call and the text around it, not the final answer).
func firstLLMStep(t *testing.T, c *replaycase.Case) int {
	t.Helper()
	for i, st := range c.Steps {
		if st.Kind == replaycase.StepLLM {
			require.NotSame(t, c.LastLLMStep(), &c.Steps[i], "the fixture's first model call is its last")
			return i
		}
	}
	t.Fatal("no LLM step")
	return -1
}

// Two runs whose intermediate model answer differs while the tool calls and the final answer
// agree used to compare equal: the output of a model call other than the last was compared
// nowhere. Each changed output is one model_output_changed finding on that step, for its text,
// reasoning, refusal and finish reason; tool-call parts are left to the tools point.
func TestChangedIntermediateModelOutputIsFound(t *testing.T) {
	base := fixtureCase(t, testfixtures.OTelEvents)
	i := firstLLMStep(t, base)
	path := fmt.Sprintf("steps[%d].output_messages", base.Steps[i].Index)
	for name, edit := range map[string]func(st *replaycase.Step){
		"text": func(st *replaycase.Step) {
			st.OutputMessages = append(st.OutputMessages, replaycase.Message{Role: "assistant", Parts: []replaycase.Part{{Type: "text", Content: "Let me check the weather."}}})
		},
		"reasoning": func(st *replaycase.Step) {
			st.OutputMessages[0].Parts = append(st.OutputMessages[0].Parts, replaycase.Part{Type: "reasoning", Content: "The user wants Paris."})
		},
		"refusal": func(st *replaycase.Step) {
			st.OutputMessages[0].Parts = []replaycase.Part{{Type: "refusal", Content: "I cannot help with that."}}
		},
		"finish_reason": func(st *replaycase.Step) { st.OutputMessages[0].FinishReason = "length" },
	} {
		b := clone(t, base)
		edit(&b.Steps[i])
		r := Compare(base, b)
		got := []Finding{}
		for _, f := range r.Findings {
			if f.Type == ModelOutputChanged {
				got = append(got, f)
			}
		}
		require.Len(t, got, 1, "%s: %+v", name, r.Findings)
		f := got[0]
		assert.Equal(t, PointModel, f.DecisionPoint, name)
		assert.Equal(t, path, f.PathA, name)
		assert.Equal(t, path, f.PathB, name)
		assert.NotEqual(t, f.Before, f.After, name)
		assert.Contains(t, f.Detail, name, name)
	}
	assert.True(t, ModelOutputChanged.Secondary(), "a live model's words differ from run to run; their consequences are the decisions")
	// A finish reason spelled as another API spells it is the same reason.
	b := clone(t, base)
	respelled := false
	for j := range b.Steps[i].OutputMessages {
		if m := &b.Steps[i].OutputMessages[j]; m.FinishReason == "tool_call" {
			m.FinishReason, respelled = "tool_calls", true
		}
	}
	require.True(t, respelled, "the fixture's first model call ends in tool_call")
	assert.Empty(t, Compare(base, b).Findings)
}

// The tool calls a model call answered with are compared at the tools point, from the tool
// spans: another call id in the model's output is no model_output_changed.
func TestToolCallPartsAreNotModelOutput(t *testing.T) {
	base := fixtureCase(t, testfixtures.OTelEvents)
	i := firstLLMStep(t, base)
	b := clone(t, base)
	changed := false
	for j, m := range b.Steps[i].OutputMessages {
		for k, p := range m.Parts {
			if p.Type == "tool_call" {
				b.Steps[i].OutputMessages[j].Parts[k].ID = "call_other"
				changed = true
			}
		}
	}
	require.True(t, changed, "the fixture's first model call calls a tool")
	assert.Empty(t, Compare(base, b).Findings)
}
