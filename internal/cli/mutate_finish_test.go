package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/replaycase"
)

const (
	lyonCall = `{"role":"assistant","parts":[{"type":"tool_call","id":"call_9","name":"get_weather","arguments":"{\"city\":\"Lyon\"}"}]}`
	snowText = `"It is snowing in Paris."`
)

// An edited output message says what it now is: a text edited in for the recorded tool call
// ends with stop, a tool call edited in for the recorded answer with tool_call, on the message,
// in the step's finish_reasons and in the final_output it gives. The replay extension renders
// the finish reason from the message: a tool call with an empty one was served as
// finish_reason "stop", and an agent that checks it took the call for an answer.
func TestMutateSaysWhatTheEditedOutputIs(t *testing.T) {
	root, cases := fixtureDataset(t, testfixtures.OTelEvents)
	orig := cases[0]
	require.Equal(t, []string{"tool_call"}, orig.Steps[1].FinishReasons)
	require.Equal(t, []string{"stop"}, orig.Steps[3].FinishReasons)

	toText := mutateOne(t, root, orig.CaseID, "--step", "1", "--response", snowText)
	assert.Equal(t, "stop", toText.Steps[1].OutputMessages[0].FinishReason)
	assert.Equal(t, []string{"stop"}, toText.Steps[1].FinishReasons)

	toCall := mutateOne(t, root, orig.CaseID, "--step", "3", "--response", lyonCall)
	assert.Equal(t, "tool_call", toCall.Steps[3].OutputMessages[0].FinishReason)
	assert.Equal(t, []string{"tool_call"}, toCall.Steps[3].FinishReasons)
	require.NotNil(t, toCall.FinalOutput, "step 3 gave the run's answer")
	assert.Equal(t, "tool_call", toCall.FinalOutput.FinishReason)

	otherCall := mutateOne(t, root, orig.CaseID, "--step", "1", "--response", lyonCall)
	assert.Equal(t, "tool_call", otherCall.Steps[1].OutputMessages[0].FinishReason, "a tool call for a tool call keeps the recorded reason")

	request, err := os.ReadFile(filepath.Join(testfixtures.Dir(), "..", "requests", "weather-first-call.json"))
	require.NoError(t, err)
	base := startReplay(t, root)
	for id, want := range map[string]string{toText.CaseID: "stop", otherCall.CaseID: "tool_calls"} {
		got := post(t, fmt.Sprintf("%s/v1/cases/%s/openai/v1/chat/completions", base, id), request)
		assert.Equal(t, want, got["choices"].([]any)[0].(map[string]any)["finish_reason"], id)
	}
}

func TestSetFinishReasons(t *testing.T) {
	text := func(reason string) replaycase.Message {
		return replaycase.Message{Role: "assistant", FinishReason: reason, Parts: []replaycase.Part{{Type: "text", Content: "a"}}}
	}
	call := func(reason string) replaycase.Message {
		return replaycase.Message{Role: "assistant", FinishReason: reason, Parts: []replaycase.Part{{Type: "tool_call", ID: "c", Name: "f"}}}
	}
	refusal := replaycase.Message{Role: "assistant", Parts: []replaycase.Part{{Type: "refusal", Content: "no"}}}
	noContent := func(reason string) replaycase.Message {
		return replaycase.Message{Role: "assistant", FinishReason: reason}
	}
	for name, tc := range map[string]struct {
		recorded replaycase.Step
		edit     []replaycase.Message
		want     []string
	}{
		"text for a text keeps its reason":            {replaycase.Step{OutputMessages: []replaycase.Message{text("length")}}, []replaycase.Message{text("")}, []string{"length"}},
		"text for a tool call":                        {replaycase.Step{OutputMessages: []replaycase.Message{call("tool_call")}}, []replaycase.Message{text("")}, []string{"stop"}},
		"tool call for a text":                        {replaycase.Step{OutputMessages: []replaycase.Message{text("stop_sequence")}}, []replaycase.Message{call("")}, []string{"tool_call"}},
		"tool call for a tool call":                   {replaycase.Step{OutputMessages: []replaycase.Message{call("length")}}, []replaycase.Message{call("")}, []string{"length"}},
		"text for a refusal in text":                  {replaycase.Step{OutputMessages: []replaycase.Message{text("refusal")}}, []replaycase.Message{text("")}, []string{"stop"}},
		"text for a filtered text":                    {replaycase.Step{OutputMessages: []replaycase.Message{text("content_filter")}}, []replaycase.Message{text("")}, []string{"stop"}},
		"refusal for a refusal":                       {replaycase.Step{OutputMessages: []replaycase.Message{noContent("refusal")}}, []replaycase.Message{refusal}, []string{"refusal"}},
		"text for a call recorded without content":    {replaycase.Step{OutputMessages: []replaycase.Message{noContent("tool_call")}}, []replaycase.Message{text("")}, []string{"stop"}},
		"the step's reason when the message has none": {replaycase.Step{OutputMessages: []replaycase.Message{text("")}, FinishReasons: []string{"length"}}, []replaycase.Message{text("")}, []string{"length"}},
		"more messages than recorded":                 {replaycase.Step{OutputMessages: []replaycase.Message{text("stop")}}, []replaycase.Message{text(""), call("")}, []string{"stop", "tool_call"}},
		"nothing recorded":                            {replaycase.Step{}, []replaycase.Message{text(""), call("")}, []string{"stop", "tool_call"}},
		"a given reason, normalized":                  {replaycase.Step{OutputMessages: []replaycase.Message{text("stop")}}, []replaycase.Message{call("tool_calls"), text("END_TURN")}, []string{"tool_call", "stop"}},
		"a given blank reason is none":                {replaycase.Step{OutputMessages: []replaycase.Message{call("tool_call")}}, []replaycase.Message{text(" ")}, []string{"stop"}},
		"in the step's vocabulary":                    {replaycase.Step{OutputMessages: []replaycase.Message{text("end_turn"), call("tool_calls")}}, []replaycase.Message{call(""), text("")}, []string{"tool_calls", "end_turn"}},
	} {
		t.Run(name, func(t *testing.T) {
			msgs := append([]replaycase.Message(nil), tc.edit...)
			got := setFinishReasons(&tc.recorded, msgs)
			assert.Equal(t, tc.want, got)
			for i, m := range msgs {
				assert.Equal(t, tc.want[i], m.FinishReason, "message %d's own", i)
			}
		})
	}
}
