package wireapi

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/replaycase"
)

func TestParseResponsesRequest(t *testing.T) {
	r, err := ParseResponsesRequest([]byte(`{"model":"gpt-4.1-mini","instructions":"Be brief.","temperature":0.2,"max_output_tokens":64,
		"tools":[{"type":"function","name":"get_weather","parameters":{"type":"object"}}],
		"input":[{"role":"user","content":[{"type":"input_text","text":"Paris?"}]},
		{"type":"function_call","id":"fc_1","call_id":"call_1","name":"get_weather","arguments":"{\"city\":\"Paris\"}"},
		{"type":"function_call","id":"fc_2","call_id":"call_2","name":"get_weather","arguments":"{\"city\":\"Lyon\"}"},
		{"type":"reasoning","id":"rs_1","summary":[]},
		{"type":"function_call_output","call_id":"call_1","output":"14C"}],"stream":true}`))
	require.NoError(t, err)
	assert.True(t, r.Stream)
	assert.Equal(t, "gpt-4.1-mini", r.Params.RequestModel)
	assert.Equal(t, int64(64), *r.Params.MaxTokens)
	assert.Equal(t, []replaycase.ToolDefinition{{Type: "function", Name: "get_weather"}}, r.Tools)
	assert.Equal(t, []replaycase.Message{
		{Role: "system", Parts: []replaycase.Part{{Type: "text", Content: "Be brief."}}},
		{Role: "user", Parts: []replaycase.Part{{Type: "text", Content: "Paris?"}}},
		{Role: "assistant", Parts: []replaycase.Part{{Type: "tool_call", ID: "call_1", Name: "get_weather", Arguments: `{"city":"Paris"}`}}},
		{Role: "assistant", Parts: []replaycase.Part{{Type: "tool_call", ID: "call_2", Name: "get_weather", Arguments: `{"city":"Lyon"}`}}},
		{Role: "tool", Parts: []replaycase.Part{{Type: "tool_call_response", ID: "call_1", Response: "14C"}}},
	}, r.Input, "one message per item; reasoning items are not part of the request")

	s, err := ParseResponsesRequest([]byte(`{"model":"m","input":"hello"}`))
	require.NoError(t, err)
	assert.Equal(t, []replaycase.Message{{Role: "user", Parts: []replaycase.Part{{Type: "text", Content: "hello"}}}}, s.Input)
}

func TestParseResponsesRequestNamesTheField(t *testing.T) {
	for body, param := range map[string]string{
		`{"input":"x"}`:                           "model",
		`{"model":"m"}`:                           "input",
		`{"model":"m","input":3}`:                 "input",
		`{"model":"m","input":[{"content":"x"}]}`: "input[0].role",
		`{"model":"m","input":[{"type":"function_call","name":"f"}]}`:       "input[0].call_id",
		`{"model":"m","input":[{"type":"item_reference"}]}`:                 "input[0].id",
		`{"model":"m","input":[{"type":"web_search_call","id":"ws_1"}]}`:    "input[0].type",
		`{"model":"m","input":"x","tools":[{"type":"web_search_preview"}]}`: "tools[0].type",
	} {
		_, err := ParseResponsesRequest([]byte(body))
		var re *RequestError
		require.True(t, errors.As(err, &re), body)
		assert.Equal(t, param, re.Param, body)
	}
}

func TestResolveReferences(t *testing.T) {
	first := &replaycase.Step{Kind: replaycase.StepLLM, ResponseID: "resp_1",
		InputMessages: []replaycase.Message{{Role: "system", Parts: []replaycase.Part{{Type: "text", Content: "Be brief."}}}, {Role: "user", Parts: []replaycase.Part{{Type: "text", Content: "Paris?"}}}},
		OutputMessages: []replaycase.Message{{Role: "assistant", Parts: []replaycase.Part{
			{Type: "tool_call", ID: "call_1", Name: "get_weather", Arguments: `{"city":"Paris"}`},
			{Type: "tool_call", ID: "call_2", Name: "get_weather", Arguments: `{"city":"Lyon"}`}}}}}
	recorded := func(key string, byCall bool) *replaycase.Step {
		if !byCall && key == "resp_1" || byCall && (key == "call_1" || key == "call_2") {
			return first
		}
		return nil
	}
	whole, err := ParseResponsesRequest([]byte(`{"model":"m","instructions":"Be brief.","input":[{"role":"user","content":"Paris?"},
		{"type":"function_call","call_id":"call_1","name":"get_weather","arguments":"{\"city\":\"Paris\"}"},
		{"type":"function_call","call_id":"call_2","name":"get_weather","arguments":"{\"city\":\"Lyon\"}"},
		{"type":"function_call_output","call_id":"call_1","output":"14C"}]}`))
	require.NoError(t, err)
	want, err := whole.Resolve(recorded)
	require.NoError(t, err)
	for _, body := range []string{
		`{"model":"m","instructions":"Be brief.","previous_response_id":"resp_1","input":[{"type":"function_call_output","call_id":"call_1","output":"14C"}]}`,
		`{"model":"m","instructions":"Be brief.","input":[{"role":"user","content":"Paris?"},{"type":"item_reference","id":"fc_call_1"},{"type":"item_reference","id":"fc_call_2"},{"type":"function_call_output","call_id":"call_1","output":"14C"}]}`,
	} {
		r, err := ParseResponsesRequest([]byte(body))
		require.NoError(t, err)
		got, err := r.Resolve(recorded)
		require.NoError(t, err, body)
		assert.Equal(t, want, got, body)
	}
	r, err := ParseResponsesRequest([]byte(`{"model":"m","input":[{"type":"item_reference","id":"fc_call_9"}]}`))
	require.NoError(t, err)
	_, err = r.Resolve(recorded)
	var re *RequestError
	require.True(t, errors.As(err, &re))
	assert.Equal(t, "input[0].id", re.Param)
}

// A Responses input_image (image_url is the URL itself, or a file_id) is the same image part a
// Chat Completions image_url part is, as the GenAI conventions record it; it was refused.
func TestParseResponsesInputImage(t *testing.T) {
	r, err := ParseResponsesRequest([]byte(`{"model":"m","input":[{"role":"user","content":[{"type":"input_text","text":"What is this?"},
		{"type":"input_image","image_url":"https://x/cat.png","detail":"auto"},{"type":"input_image","file_id":"file-1"}]}]}`))
	require.NoError(t, err)
	assert.Equal(t, []replaycase.Message{{Role: "user", Parts: []replaycase.Part{{Type: "text", Content: "What is this?"},
		{Type: "uri", Modality: "image", URI: "https://x/cat.png"}, {Type: "file", Modality: "image", FileID: "file-1"}}}}, r.Input)
	chat, err := ParseChatRequest([]byte(`{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"What is this?"},{"type":"image_url","image_url":{"url":"https://x/cat.png"}}]}]}`))
	require.NoError(t, err)
	assert.Equal(t, chat.Messages[0].Parts, r.Input[0].Parts[:2], "the same parts as Chat Completions")

	for body, param := range map[string]string{
		`{"model":"m","input":[{"role":"user","content":[{"type":"input_image"}]}]}`:                          "input[0].content[0].image_url",
		`{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":"https://x"}]}]}`: "messages[0].content[0].image_url",
		`{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":5}}]}]}`:   "messages[0].content[0].image_url.url",
		`{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":null}]}]}`:        "messages[0].content[0].image_url",
		// An image without its URL is refused, as the API refuses it: read as no part, it would
		// match the recording of the same request without the image.
		`{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":null}}]}]}`: "messages[0].content[0].image_url.url",
		`{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{}}]}]}`:           "messages[0].content[0].image_url.url",
		`{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":""}}]}]}`:   "messages[0].content[0].image_url.url",
	} {
		var err error
		if strings.Contains(body, `"input"`) {
			_, err = ParseResponsesRequest([]byte(body))
		} else {
			_, err = ParseChatRequest([]byte(body))
		}
		var re *RequestError
		require.True(t, errors.As(err, &re), body)
		assert.Equal(t, param, re.Param, body)
	}
}
