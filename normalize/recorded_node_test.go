package normalize

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/replaycase"
)

// toolCallParts lists each model step's requested tool calls as "id name arguments".
func toolCallParts(c *replaycase.Case) [][]string {
	return outputParts(c, func(p replaycase.Part) (string, bool) {
		return p.ID + " " + p.Name + " " + p.Arguments, p.Type == "tool_call"
	})
}

// outputParts lists, for each model step, what show makes of the output parts it keeps.
func outputParts(c *replaycase.Case, show func(replaycase.Part) (string, bool)) [][]string {
	var out [][]string
	for _, st := range c.Steps {
		if st.Kind != replaycase.StepLLM {
			continue
		}
		var parts []string
		for _, m := range st.OutputMessages {
			for _, p := range m.Parts {
				if s, keep := show(p); keep {
					parts = append(parts, s)
				}
			}
		}
		out = append(out, parts)
	}
	return out
}

// The official OTel JS OpenAI instrumentation (0.21) reports a streamed Responses call as one
// details event with the input and one more per output item; both parallel function calls
// of the first call are its output, not just the first item's.
func TestOTelJSStreamedResponsesKeepEveryOutputItem(t *testing.T) {
	c, findings, _ := Build(recordedRun(t, "node", "otel-responses-stream"))
	require.Empty(t, findings, "nothing about the run is missing or unreadable")
	require.Equal(t, [][]string{
		{`call_1_0 get_weather {"city":"Paris"}`, `call_1_1 get_weather {"city":"Lyon"}`},
		nil,
	}, toolCallParts(c))
	require.Equal(t, "Paris and Lyon: 14 and overcast.", c.Steps[len(c.Steps)-1].OutputMessages[0].Parts[0].Content)
}

// OpenInference's JS Anthropic instrumentation (0.2.8) writes each tool_use block as
// contents.N.tool_call.* and again as tool_calls.N.*: one tool_call part each, with its id,
// name and input, with messages.create and with messages.stream.
func TestOpenInferenceJSAnthropicToolUse(t *testing.T) {
	for _, run := range []string{"anthropic-openinference-create", "anthropic-openinference-stream"} {
		c, _, _ := Build(recordedRun(t, "node", run))
		var calls [][]string
		for _, st := range c.Steps {
			if st.Name == "Anthropic Messages" {
				calls = append(calls, toolCallParts(&replaycase.Case{Steps: []replaycase.Step{st}})...)
			}
		}
		require.Equal(t, [][]string{
			{`toolu_1_0 get_weather {"city":"Paris"}`, `toolu_1_1 get_weather {"city":"Lyon"}`},
			nil,
		}, calls, run)
	}
}

// The Anthropic TypeScript SDK's own span for a call (content-less, nested under
// OpenInference's span with messages.create, a sibling containing it with messages.stream) is
// the same model call, not a second one: one model step per call, with the response id the
// SDK's span recorded, and the case is accepted.
func TestAnthropicSDKSpanUnderOpenInferenceIsOneModelStep(t *testing.T) {
	for _, run := range []string{"anthropic-openinference-create", "anthropic-openinference-stream"} {
		c, findings, _ := Build(recordedRun(t, "node", run))
		require.Empty(t, findings, run)
		var llm []string
		for _, st := range c.Steps {
			if st.Kind == replaycase.StepLLM {
				llm = append(llm, st.Name+" "+st.ResponseID+" "+st.API)
			}
		}
		require.Equal(t, []string{"Anthropic Messages msg_1 anthropic.messages", "Anthropic Messages msg_2 anthropic.messages"}, llm, run)
		require.Equal(t, []string{"openinference", "otel_genai"}, c.Provenance.Conventions, run)
	}
	// With the SDK's content mode on, both spans of a call carry the content: still one step
	// per call (the SDK's span nested under OpenInference's is dropped; of the two siblings of
	// a stream, the later-starting one), and the usage is counted once.
	for _, run := range []string{"anthropic-openinference-content-create", "anthropic-openinference-content-stream"} {
		c, findings, _ := Build(recordedRun(t, "node", run))
		require.Empty(t, findings, run)
		var ids []string
		for _, st := range c.Steps {
			if st.Kind == replaycase.StepLLM {
				ids = append(ids, st.ResponseID)
			}
		}
		require.Equal(t, []string{"msg_1", "msg_2"}, ids, run)
		require.Equal(t, int64(83), c.Usage.InputTokens, run)
	}
}

// OpenInference's JS Anthropic instrumentation flattens the tool results of one user turn
// into one message naming the last result only, and keeps the system prompt only in
// input.value: the case's input is read from that request body, every result included.
func TestOpenInferenceJSAnthropicInputFromRequestBody(t *testing.T) {
	for _, run := range []string{"anthropic-openinference-create", "anthropic-openinference-stream"} {
		c, _, _ := Build(recordedRun(t, "node", run))
		var second *replaycase.Step
		for i := range c.Steps {
			if c.Steps[i].Kind == replaycase.StepLLM && c.Steps[i].Name == "Anthropic Messages" {
				second = &c.Steps[i]
			}
		}
		require.NotNil(t, second, run)
		var got []string
		for _, m := range second.InputMessages {
			for _, p := range m.Parts {
				got = append(got, m.Role+" "+p.Type+" "+p.ID+" "+p.Content+p.Response)
			}
		}
		require.Equal(t, []string{
			"system text  You are a weather assistant.",
			"user text  Weather in Paris and Lyon?",
			"assistant tool_call toolu_1_0 ",
			"assistant tool_call toolu_1_1 ",
			`tool tool_call_response toolu_1_0 {"city":"Paris","temperature":14,"sky":"overcast"}`,
			`tool tool_call_response toolu_1_1 {"city":"Lyon","temperature":14,"sky":"overcast"}`,
		}, got, run)
	}
}

// inputShape lists a step's input messages as "role part-type id" per part.
func inputShape(st *replaycase.Step) []string {
	var out []string
	for i, m := range st.InputMessages {
		for _, p := range m.Parts {
			out = append(out, fmt.Sprintf("%d %s %s %s", i, m.Role, p.Type, p.ID))
		}
	}
	return out
}

// The Vercel AI SDK (ai 6.0.325) records an assistant turn with two tool calls as one
// message; a Responses request carries them as two function_call items, so the Responses
// step's input holds one message per call (as a live request is read). Its Anthropic steps
// keep the turn whole, and their tool_choice is the object @ai-sdk/anthropic sends.
func TestVercelRecordedRequestsReadAsTheProviderSendsThem(t *testing.T) {
	for _, run := range []string{"vercel-openai-generate", "vercel-openai-stream", "vercel-anthropic-generate", "vercel-anthropic-stream"} {
		c, findings, _ := Build(recordedRun(t, "node", run))
		require.Empty(t, findings, run)
		var llm []*replaycase.Step
		for i := range c.Steps {
			if c.Steps[i].Kind == replaycase.StepLLM {
				llm = append(llm, &c.Steps[i])
			}
		}
		require.Len(t, llm, 2, run)
		if strings.Contains(run, "openai") {
			require.Equal(t, replaycase.APIOpenAIResponses, llm[1].API)
			require.Equal(t, "auto", llm[1].ModelConfig.ToolChoice)
			require.Equal(t, []string{"0 system text ", "1 user text ", "2 assistant tool_call call_1_0", "3 assistant tool_call call_1_1",
				"4 tool tool_call_response call_1_0", "4 tool tool_call_response call_1_1"}, inputShape(llm[1]), run)
			continue
		}
		require.Equal(t, replaycase.APIAnthropicMessages, llm[1].API)
		require.Equal(t, `{"type":"auto"}`, llm[1].ModelConfig.ToolChoice)
		require.Equal(t, []string{"0 system text ", "1 user text ", "2 assistant tool_call toolu_1_0", "2 assistant tool_call toolu_1_1",
			"3 tool tool_call_response toolu_1_0", "3 tool tool_call_response toolu_1_1"}, inputShape(llm[1]), run)
	}
}

// itemIDs lists each model step's output parts that carry an item id, as "type id item-id".
func itemIDs(c *replaycase.Case) [][]string {
	return outputParts(c, func(p replaycase.Part) (string, bool) {
		return p.Type + " " + p.ID + " " + p.ItemID, p.ItemID != ""
	})
}

// The Responses item ids the telemetry recorded are kept: OpenInference's output.value holds
// the whole response (fc_… and msg_…), the official OTel JS instrumentation writes each
// function call's item id beside its call_id (it records no message item id).
func TestResponsesItemIDsFromRecordedRuns(t *testing.T) {
	for run, want := range map[string][][]string{
		"openinference-responses":        {{"tool_call call_1_0 fc_1_0", "tool_call call_1_1 fc_1_1"}, {"output_text  msg_2"}},
		"openinference-responses-stream": {{"tool_call call_1_0 fc_1_0", "tool_call call_1_1 fc_1_1"}, {"output_text  msg_2"}},
		"otel-responses":                 {{"tool_call call_1_0 fc_1_0", "tool_call call_1_1 fc_1_1"}, nil},
		"otel-responses-stream":          {{"tool_call call_1_0 fc_1_0", "tool_call call_1_1 fc_1_1"}, nil},
	} {
		c, findings, _ := Build(recordedRun(t, "node", run))
		require.Empty(t, findings, run)
		require.Equal(t, want, itemIDs(c), run)
	}
}

// OpenLLMetry's Anthropic instrumentation (0.27.0, SDK 0.137.0) records a streamed call's
// tool_use blocks from their start events only: arguments {}, while the tool executions and
// the next request show {"city":"Paris"} and {"city":"Lyon"}. That run is quarantined naming
// each call; the same agent with messages.create is accepted, with the SDK's own span folded.
func TestTraceloopAnthropicStreamLosesToolArguments(t *testing.T) {
	c, findings, _ := Build(recordedRun(t, "node", "anthropic-traceloop-create"))
	require.Empty(t, findings)
	require.Equal(t, []string{"otel_genai"}, c.Provenance.Conventions)

	_, findings, _ = Build(recordedRun(t, "node", "anthropic-traceloop-stream"))
	var got []string
	for _, f := range findings {
		got = append(got, f.Code+": "+f.Detail)
	}
	require.Equal(t, []string{
		`no_model_output: model call "chat claude-haiku-4-5" recorded tool call "toolu_1_0" with arguments {}, but the trace shows it made with {"city":"Paris"} (arguments lost, as when a stream is recorded from its start events only)`,
		`no_model_output: model call "chat claude-haiku-4-5" recorded tool call "toolu_1_1" with arguments {}, but the trace shows it made with {"city":"Lyon"} (arguments lost, as when a stream is recorded from its start events only)`,
	}, got)
}

// OpenLLMetry's OpenAI instrumentation (0.27.0) records a Responses call whose output is two
// function_call items as one assistant message with an empty text part: the finding says the
// message has no content, not that there was none.
func TestTraceloopResponsesOutputWithoutContent(t *testing.T) {
	_, findings, _ := Build(recordedRun(t, "node", "traceloop-responses"))
	require.Len(t, findings, 1)
	require.Equal(t, replaycase.ReasonNoModelOutput, findings[0].Code)
	require.Equal(t, `model call "chat gpt-4.1-mini" recorded 1 output message(s) with no content`, findings[0].Detail)
}
