package callsite_test

import (
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/callsite"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/normalize"
	"github.com/reprise-dev/reprise/replaycase"
	"github.com/reprise-dev/reprise/wireapi"
)

var allFields = []string{callsite.FieldMaxTokens, callsite.FieldSeed, callsite.FieldStop, callsite.FieldTemperature, callsite.FieldToolChoice, callsite.FieldTools, callsite.FieldTopP}

// withoutMarker is a field set as version 1 wrote it.
func withoutMarker(fields []string) []string {
	return slices.DeleteFunc(slices.Clone(fields), func(f string) bool { return f == callsite.FieldV2 })
}

// bodyRequest reads a request body of testdata/version1 as the replay extension does
// (replayext: chatCallSite, and the Responses and Anthropic handlers).
func bodyRequest(t *testing.T, name string) callsite.Request {
	b, err := os.ReadFile("testdata/version1/" + name + ".json")
	require.NoError(t, err)
	switch name[:4] {
	case "chat":
		p, err := wireapi.ParseChatRequest(b)
		require.NoError(t, err)
		r := callsite.Request{Model: p.Params.RequestModel, Messages: p.Messages, Tools: p.Tools, Params: p.Params}
		if v1 := p.Version1; v1 != nil {
			r.Version1 = &callsite.Request{Model: v1.Params.RequestModel, Messages: v1.Messages, Tools: v1.Tools, Params: v1.Params}
		}
		return r
	case "resp":
		p, err := wireapi.ParseResponsesRequest(b)
		require.NoError(t, err)
		return callsite.Request{Model: p.Params.RequestModel, Messages: p.Input, Tools: p.Tools, Params: p.Params}
	default:
		p, err := wireapi.ParseMessagesRequest(b)
		require.NoError(t, err)
		return callsite.Request{Model: p.Params.RequestModel, Messages: p.Messages, Tools: p.Tools, Params: p.Params}
	}
}

// Field sets without the version marker give, byte for byte, the ids the code before version 2
// computed (pinned here from that code): datasets written before keep matching live requests.
func TestVersion1IDsAreUnchanged(t *testing.T) {
	// The fixture runs' model calls, over the fields each recorded (their stored ids then).
	steps := map[string]string{
		"otel-events/1":    "cs_466df155938b09666b600f990bb72f6e",
		"otel-events/3":    "cs_165e6747daa2b4a1baf642c0e4df66bc",
		"otel-nocontent/1": "cs_5f2f2243f0592a4148125cb48ed50737",
		"otel-nocontent/3": "cs_d8f083882c8e161987583f194723c3cc",
		"traceloop/1":      "cs_424767eb951e3ecf75ca073c2a64c3a6",
		"traceloop/3":      "cs_8f5edb7d718e833c13352f01c4a7062a",
		"openinference/1":  "cs_341c0bfdb6a77db336e56a021e471186",
		"openinference/3":  "cs_944407c82e6311ce1dee89fc69020ef1",
	}
	for _, run := range []string{testfixtures.OTelEvents, testfixtures.OTelNoContent, testfixtures.Traceloop, testfixtures.OpenInference} {
		c, _, _ := normalize.Build(testfixtures.Traces(t, run), testfixtures.Logs(t, run))
		for i := range c.Steps {
			if st := &c.Steps[i]; st.Kind == replaycase.StepLLM {
				key := fmt.Sprintf("%s/%d", run, i)
				require.Contains(t, steps, key)
				assert.Equal(t, steps[key], callsite.FromStep(st).ID(withoutMarker(st.CallSiteFields)), key)
			}
		}
	}
	// The SDK's live requests, over no optional field and over all.
	live := [][2]string{
		{"cs_5f896adadbeae4a04db37242a54f730d", "cs_341c0bfdb6a77db336e56a021e471186"},
		{"cs_556ce8f80a7be9b4f9c97420f6d01056", "cs_944407c82e6311ce1dee89fc69020ef1"},
	}
	for i, body := range liveBodies(t) {
		r := liveRequest(body)
		assert.Equal(t, live[i], [2]string{r.ID(nil), r.ID(allFields)}, "live body %d", i)
	}
	// Bodies with what version 2 reads differently: legacy function calling, tool results as
	// part arrays (Chat, Responses), an Anthropic tool_result with is_error and two text blocks.
	for name, want := range map[string][2]string{
		"chat-legacy-functions":       {"cs_b614ca1261b867dcd8f46f2109326454", "cs_215d7527655c1ef59dfc4004427746bd"},
		"chat-tool-result-parts":      {"cs_0d266ee4067092437184710e2a7bd69c", "cs_2b996585c75cbea6ae4df84ebf6549ed"},
		"responses-output-parts":      {"cs_05cfe36ee0221dd3dd3ba627c639f728", "cs_64957d12af25652a8cb27535e735329b"},
		"anthropic-tool-result-error": {"cs_b19696e507680b28886d1a8c15018613", "cs_4cdedcb886a5c674591f7199d4894361"},
	} {
		r := bodyRequest(t, name)
		assert.Equal(t, want, [2]string{r.ID(nil), r.ID(allFields)}, name)
	}
}

// A step recorded now lists the marker, and its version-2 id is another than its version-1 id.
func TestNewRecordingsAreVersion2(t *testing.T) {
	c, _, _ := normalize.Build(testfixtures.Traces(t, testfixtures.OpenInference), testfixtures.Logs(t, testfixtures.OpenInference))
	st := &c.Steps[1]
	require.Contains(t, st.CallSiteFields, callsite.FieldV2)
	assert.Equal(t, st.CallSiteID, callsite.FromStep(st).ID(st.CallSiteFields))
	assert.NotEqual(t, st.CallSiteID, callsite.FromStep(st).ID(withoutMarker(st.CallSiteFields)))
	canon, err := callsite.CanonicalJSON(callsite.FromStep(st).Canonical(st.CallSiteFields))
	require.NoError(t, err)
	assert.Contains(t, string(canon), `"v":2}`)
}

// Version 2 reads legacy function calling: two requests that differ only in a legacy call's
// arguments get two ids, and the call is the tool call OpenInference records for it.
func TestVersion2ReadsLegacyFunctionCalls(t *testing.T) {
	paris := bodyRequest(t, "chat-legacy-functions")
	lyon := paris
	lyon.Messages = slices.Clone(paris.Messages)
	require.Equal(t, []replaycase.Part{{Type: "tool_call", Name: "get_weather", Arguments: `{"city":"Paris"}`}}, paris.Messages[2].Parts)
	lyon.Messages[2].Parts = []replaycase.Part{{Type: "tool_call", Name: "get_weather", Arguments: `{"city":"Lyon"}`}}
	lyon.Version1 = nil // version 1 did not see the call, so its reading is the same as Paris's
	fields := []string{callsite.FieldV2, callsite.FieldTools, callsite.FieldToolChoice}
	assert.NotEqual(t, paris.ID(fields), lyon.ID(fields))
	assert.Equal(t, paris.Version1.ID(withoutMarker(fields)), paris.ID(withoutMarker(fields)))

	// What OpenInference's flattened messages give for the same request (normalize reads
	// message.function_call_name as a tool call without an id, a function message as a tool
	// message with the function's name), with the functions and function_call read from its body.
	recorded := callsite.Request{Model: "gpt-4o-mini", Messages: []replaycase.Message{
		{Role: "system", Parts: []replaycase.Part{{Type: "text", Content: "You are a weather bot."}}},
		{Role: "user", Parts: []replaycase.Part{{Type: "text", Content: "What is the weather in Paris today?"}}},
		{Role: "assistant", Parts: []replaycase.Part{{Type: "tool_call", Name: "get_weather", Arguments: `{"city": "Paris"}`}}},
		{Role: "tool", Name: "get_weather", Parts: []replaycase.Part{{Type: "text", Content: `{"temp_c":14}`}}},
	}, Tools: []replaycase.ToolDefinition{{Name: "get_weather"}}, Params: replaycase.ModelConfig{ToolChoice: "auto"}}
	assert.Equal(t, recorded.ID(fields), paris.ID(fields))
}

// Version 2 reads a tool result sent as an array of text parts as its text, whichever way the
// recording stored it: the array's JSON (wireapi), the text of a single block (the semconv
// adapter), or text blocks joined by a newline (wireapi's Anthropic reading).
func TestVersion2ReadsToolResultPartsAsText(t *testing.T) {
	result := func(response string) callsite.Request {
		return callsite.Request{Model: "m", Messages: []replaycase.Message{{Role: "tool", Parts: []replaycase.Part{{Type: "tool_call_response", ID: "c1", Response: response}}}}}
	}
	v2 := []string{callsite.FieldV2}
	assert.Equal(t, result("14C").ID(v2), result(`[{"text":"14C","type":"text"}]`).ID(v2))
	assert.Equal(t, result("14C\nsunny").ID(v2), result(`[{"type":"text","text":"14C"}, {"type":"input_text","text":"sunny"}]`).ID(v2))
	assert.NotEqual(t, result("14C").ID(nil), result(`[{"text":"14C","type":"text"}]`).ID(nil), "version 1 is unchanged")
	for _, kept := range []string{`[]`, `[{"type":"image_url","image_url":{"url":"https://x"}}]`, `[{"type":"text","text":"a"},{"type":"refusal"}]`, `[{"type":"text"`, `{"type":"text","text":"a"}`} {
		assert.Equal(t, kept, callsite.ToolResultText(kept))
	}

	chat, responses, anthropic := bodyRequest(t, "chat-tool-result-parts"), bodyRequest(t, "responses-output-parts"), bodyRequest(t, "anthropic-tool-result-error")
	assert.Equal(t, "14C\nsunny", callsite.ToolResultText(chat.Messages[2].Parts[0].Response))
	assert.Equal(t, "14C", callsite.ToolResultText(responses.Messages[3].Parts[0].Response))
	assert.Equal(t, "service down\nretry later", anthropic.Messages[3].Parts[0].Response, "wireapi's Anthropic reading")
}
