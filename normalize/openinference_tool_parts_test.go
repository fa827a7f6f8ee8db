package normalize_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/callsite"
	"github.com/reprise-dev/reprise/normalize"
	"github.com/reprise-dev/reprise/replaycase"
	"github.com/reprise-dev/reprise/wireapi"
)

// toolPartsBody is a Chat Completions request whose tool message's content is an array of text
// parts.
const toolPartsBody = `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"What is the weather in Paris today?"},
 {"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},
 {"role":"tool","tool_call_id":"call_1","content":[{"type":"text","text":"14C"},{"type":"text","text":"sunny"}]}]}`

// openInferenceCall is the LLM span the OpenInference OpenAI instrumentation (Python 0.1.66,
// _get_attributes_from_message_param) writes for toolPartsBody: a content array is written as
// message.contents.N.message_content.{type, text}, not as message.content.
func openInferenceCall(image bool) ptrace.Traces {
	td := ptrace.NewTraces()
	sp := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	sp.SetName("ChatCompletion")
	sp.SetTraceID(pcommon.TraceID{1, 15: 1})
	sp.SetSpanID(pcommon.SpanID{1})
	start := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	sp.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
	sp.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(time.Second)))
	a := map[string]any{
		"openinference.span.kind": "LLM", "llm.system": "openai", "llm.model_name": "gpt-4o-mini",
		"input.value": toolPartsBody, "input.mime_type": "application/json",
		"llm.input_messages.0.message.role":                                      "user",
		"llm.input_messages.0.message.content":                                   "What is the weather in Paris today?",
		"llm.input_messages.1.message.role":                                      "assistant",
		"llm.input_messages.1.message.tool_calls.0.tool_call.id":                 "call_1",
		"llm.input_messages.1.message.tool_calls.0.tool_call.function.name":      "get_weather",
		"llm.input_messages.1.message.tool_calls.0.tool_call.function.arguments": `{"city":"Paris"}`,
		"llm.input_messages.2.message.role":                                      "tool",
		"llm.input_messages.2.message.tool_call_id":                              "call_1",
		"llm.input_messages.2.message.contents.0.message_content.type":           "text",
		"llm.input_messages.2.message.contents.0.message_content.text":           "14C",
		"llm.input_messages.2.message.contents.1.message_content.type":           "text",
		"llm.input_messages.2.message.contents.1.message_content.text":           "sunny",
		"llm.output_messages.0.message.role":                                     "assistant",
		"llm.output_messages.0.message.content":                                  "It is 14C and sunny in Paris.",
	}
	if image {
		a["llm.input_messages.2.message.contents.1.message_content.type"] = "image"
		delete(a, "llm.input_messages.2.message.contents.1.message_content.text")
		a["llm.input_messages.2.message.contents.1.message_content.image.image.url"] = "https://example.com/map.png"
	}
	if err := sp.Attributes().FromRaw(a); err != nil {
		panic(err)
	}
	return td
}

func llmStep(t *testing.T, c *replaycase.Case) *replaycase.Step {
	for i := range c.Steps {
		if c.Steps[i].Kind == replaycase.StepLLM {
			return &c.Steps[i]
		}
	}
	t.Fatal("no LLM step")
	return nil
}

// A tool result OpenInference recorded as content parts is kept (it was read as "": the result
// was lost), as the text version 2 of the call-site id reads the live array as, so the live
// request matches the recording.
func TestOpenInferenceToolResultPartsAreKept(t *testing.T) {
	c, _, _ := normalize.Build(openInferenceCall(false), plog.NewLogs())
	st := llmStep(t, c)
	require.Len(t, st.InputMessages, 3)
	assert.Equal(t, []replaycase.Part{{Type: "tool_call_response", ID: "call_1", Response: "14C\nsunny"}}, st.InputMessages[2].Parts)

	live, err := wireapi.ParseChatRequest([]byte(toolPartsBody))
	require.NoError(t, err)
	req := callsite.Request{Model: live.Params.RequestModel, Messages: live.Messages, Tools: live.Tools, Params: live.Params}
	assert.Equal(t, st.CallSiteID, req.ID(st.CallSiteFields))

	// An image among the parts: the parts are kept as a content array.
	c, _, _ = normalize.Build(openInferenceCall(true), plog.NewLogs())
	assert.JSONEq(t, `[{"type":"text","text":"14C"},{"type":"image_url","image_url":{"url":"https://example.com/map.png"}}]`, llmStep(t, c).InputMessages[2].Parts[0].Response)
}
