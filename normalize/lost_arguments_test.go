package normalize

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/replaycase"
)

// A tool that takes no arguments is called with {} and executed with {}: nothing was lost.
// The same call executed with arguments is a finding on the model step that recorded {}.
func TestLostToolArgumentsNeedsEvidenceOfArguments(t *testing.T) {
	build := func(executed string) *replaycase.Case {
		return &replaycase.Case{Steps: []replaycase.Step{
			{Kind: replaycase.StepLLM, Name: "chat m", SpanID: "a", OutputMessages: []replaycase.Message{{Role: "assistant", Parts: []replaycase.Part{{Type: "tool_call", ID: "t1", Name: "now", Arguments: "{}"}}}}},
			{Kind: replaycase.StepTool, SpanID: "b", ToolCall: &replaycase.ToolCall{ID: "t1", Name: "now", Arguments: executed}},
		}}
	}
	require.Empty(t, lostToolArguments(build("{}")))
	require.Empty(t, lostToolArguments(build("")))
	got := lostToolArguments(build(`{"tz":"UTC"}`))
	require.Len(t, got, 1)
	require.Equal(t, replaycase.Reason{Code: replaycase.ReasonNoModelOutput, SpanID: "a",
		Detail: `model call "chat m" recorded tool call "t1" with arguments {}, but the trace shows it made with {"tz":"UTC"} (arguments lost, as when a stream is recorded from its start events only)`}, got[0])
}
