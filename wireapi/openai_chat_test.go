package wireapi

import (
	"encoding/json"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	jsonv1 "github.com/go-json-experiment/json/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/replaycase"
)

// sdkBody is the first request the openai SDK sent in the recorded weather run.
func sdkBody(t testing.TB) []byte {
	b, err := os.ReadFile(filepath.Join("..", "testdata", "requests", "weather-first-call.json"))
	require.NoError(t, err)
	return b
}

func TestParseSDKRequest(t *testing.T) {
	r, err := ParseChatRequest(sdkBody(t))
	require.NoError(t, err)
	assert.Empty(t, r.Tools[0].Parameters, "schemas are read only when asked for")
	require.NoError(t, r.ReadToolSchemas())
	assert.Equal(t, "gpt-4o-mini", r.Params.RequestModel)
	require.Len(t, r.Messages, 2)
	assert.Equal(t, "system", r.Messages[0].Role)
	assert.Equal(t, "user", r.Messages[1].Role)
	assert.Equal(t, []replaycase.Part{{Type: "text", Content: "What is the weather in Paris today?"}}, r.Messages[1].Parts)
	require.Len(t, r.Tools, 1)
	assert.Equal(t, "get_weather", r.Tools[0].Name)
	assert.JSONEq(t, `{"type":"object","properties":{"city":{"type":"string"},"unit":{"type":"string","enum":["celsius","fahrenheit"]}},"required":["city"]}`, r.Tools[0].Parameters)
	assert.False(t, r.Stream)
}

func TestParseMessageShapes(t *testing.T) {
	r, err := ParseChatRequest([]byte(`{"model":"m","stream":true,"stream_options":{"include_usage":true},"stop":"END","tool_choice":{"type":"function","function":{"name":"f"}},"max_completion_tokens":64,
	"messages":[
	 {"role":"developer","content":[{"type":"text","text":"be brief"},{"type":"image_url","image_url":{"url":"https://x/img.png"}},{"type":"input_audio","input_audio":{"data":"AAA=","format":"wav"}}]},
	 {"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"a\": 1}"}}]},
	 {"role":"tool","tool_call_id":"c1","content":[{"type":"text","text":"ok"}]}]}`))
	require.NoError(t, err)
	assert.True(t, r.Stream)
	assert.True(t, r.IncludeUsage)
	assert.Equal(t, []string{"END"}, r.Params.Stop)
	assert.Equal(t, `{"function":{"name":"f"},"type":"function"}`, r.Params.ToolChoice)
	assert.Equal(t, int64(64), *r.Params.MaxTokens)
	assert.Equal(t, []replaycase.Message{
		{Role: "system", Parts: []replaycase.Part{{Type: "text", Content: "be brief"}, {Type: "uri", Modality: "image", URI: "https://x/img.png"}, {Type: "input_audio", Content: `{"input_audio":{"data":"AAA=","format":"wav"},"type":"input_audio"}`}}},
		{Role: "assistant", Parts: []replaycase.Part{{Type: "tool_call", ID: "c1", Name: "f", Arguments: `{"a": 1}`}}},
		{Role: "tool", Parts: []replaycase.Part{{Type: "tool_call_response", ID: "c1", Response: `[{"text":"ok","type":"text"}]`}}},
	}, r.Messages)
}

// Every malformed shape gets a RequestError naming the field, and no error quotes the body.
func TestParseRefusesMalformedBodies(t *testing.T) {
	const marker = "PRIVATE-555-0100"
	msgs := `"messages":[{"role":"user","content":"` + marker + `"}]`
	for _, c := range []struct{ name, body, param, code string }{
		{"empty", ``, "", "invalid_json"},
		{"null", `null`, "", "invalid_type"},
		{"array", `[{"model":"m"}]`, "", "invalid_type"},
		{"string", `"` + marker + `"`, "", "invalid_type"},
		{"not json", `{"model": "m", ` + marker, "", "invalid_json"},
		{"trailing data", `{"model":"m",` + msgs + `} {}`, "", "invalid_json"},
		{"missing model", `{` + msgs + `}`, "model", "missing_required_parameter"},
		{"model not a string", `{"model":5,` + msgs + `}`, "model", "invalid_type"},
		{"missing messages", `{"model":"m"}`, "messages", "missing_required_parameter"},
		{"messages a string", `{"model":"m","messages":"` + marker + `"}`, "messages", "invalid_type"},
		{"messages empty", `{"model":"m","messages":[]}`, "messages", "invalid_value"},
		{"message a number", `{"model":"m","messages":[1]}`, "messages", "invalid_type"},
		{"message null", `{"model":"m","messages":[null]}`, "messages[0]", "invalid_type"},
		{"missing role", `{"model":"m","messages":[{"content":"` + marker + `"}]}`, "messages[0].role", "missing_required_parameter"},
		{"unknown role", `{"model":"m","messages":[{"role":"` + marker + `"}]}`, "messages[0].role", "invalid_value"},
		{"role a number", `{"model":"m","messages":[{"role":1}]}`, "messages.role", "invalid_type"},
		{"content a number", `{"model":"m","messages":[{"role":"user","content":5}]}`, "messages[0].content", "invalid_type"},
		{"content part a string", `{"model":"m","messages":[{"role":"user","content":["` + marker + `"]}]}`, "messages[0].content[0]", "invalid_type"},
		{"content part without text", `{"model":"m","messages":[{"role":"user","content":[{"type":"text"}]}]}`, "messages[0].content[0].text", "missing_required_parameter"},
		{"stream a string", `{"model":"m",` + msgs + `,"stream":"yes"}`, "stream", "invalid_type"},
		{"stream a number", `{"model":"m",` + msgs + `,"stream":1}`, "stream", "invalid_type"},
		{"stream an object", `{"model":"m",` + msgs + `,"stream":{}}`, "stream", "invalid_type"},
		{"temperature a string", `{"model":"m",` + msgs + `,"temperature":"hot"}`, "temperature", "invalid_type"},
		{"max_tokens fractional", `{"model":"m",` + msgs + `,"max_tokens":1.5}`, "max_tokens", "invalid_type"},
		{"tools a string", `{"model":"m",` + msgs + `,"tools":"x"}`, "tools", "invalid_type"},
		{"tool without function", `{"model":"m",` + msgs + `,"tools":[{"type":"function"}]}`, "tools[0].function", "missing_required_parameter"},
		{"schema a string", `{"model":"m",` + msgs + `,"tools":[{"type":"function","function":{"name":"f","parameters":"x"}}]}`, "tools[0].function.parameters", "invalid_type"},
		{"stop a number", `{"model":"m",` + msgs + `,"stop":5}`, "stop", "invalid_type"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseChatRequest([]byte(c.body))
			var re *RequestError
			require.True(t, errors.As(err, &re), "%v", err)
			assert.Equal(t, c.param, re.Param)
			assert.Equal(t, c.code, re.Code)
			assert.NotContains(t, re.Message, marker)
			assert.Less(t, len(re.Message), 200)
		})
	}
}

func TestParseChatParamsNeedsNoMessages(t *testing.T) {
	mc, err := ParseChatParams([]byte(`{"model":"m","temperature":0.2,"max_tokens":256,"seed":7,"stop":["a","b"]}`))
	require.NoError(t, err)
	assert.Equal(t, "m", mc.RequestModel)
	assert.InDelta(t, 0.2, *mc.Temperature, 1e-12)
	assert.Equal(t, int64(256), *mc.MaxTokens)
	assert.Equal(t, int64(7), *mc.Seed)
	assert.Equal(t, []string{"a", "b"}, mc.Stop)
}

func recordedStep() *replaycase.Step {
	text := "It is mild."
	return &replaycase.Step{
		CallSiteID: "cs_0123", StartTime: time.Unix(1764460800, 0), ModelConfig: replaycase.ModelConfig{RequestModel: "gpt-4o-mini", ResponseModel: "gpt-4o-mini-2024-07-18"},
		OutputMessages: []replaycase.Message{{Role: "assistant", FinishReason: "tool_call", Parts: []replaycase.Part{{Type: "text", Content: text}, {Type: "tool_call", ID: "c1", Name: "f", Arguments: `{"a":1}`}}}},
		Usage:          replaycase.Usage{InputTokens: 3, OutputTokens: 4, TotalTokens: 7},
	}
}

func TestWriteChatCompletion(t *testing.T) {
	w := httptest.NewRecorder()
	WriteChatResponse(w, &ChatRequest{}, recordedStep())
	assert.Equal(t, "application/json", w.Header().Get("Content-Type"))
	assert.JSONEq(t, `{"id":"chatcmpl-0123","object":"chat.completion","created":1764460800,"model":"gpt-4o-mini-2024-07-18",
	 "choices":[{"index":0,"message":{"role":"assistant","content":"It is mild.","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]},"finish_reason":"tool_calls","logprobs":null}],
	 "usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}}`, w.Body.String())
}

func TestWriteChatStream(t *testing.T) {
	w := httptest.NewRecorder()
	WriteChatResponse(w, &ChatRequest{Stream: true, IncludeUsage: true}, recordedStep())
	assert.Equal(t, "text/event-stream", w.Header().Get("Content-Type"))
	var events []string
	for _, line := range strings.Split(w.Body.String(), "\n\n") {
		if line != "" {
			events = append(events, strings.TrimPrefix(line, "data: "))
		}
	}
	require.Len(t, events, 7)
	assert.JSONEq(t, `{"id":"chatcmpl-0123","object":"chat.completion.chunk","created":1764460800,"model":"gpt-4o-mini-2024-07-18","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null,"logprobs":null}]}`, events[0])
	assert.Contains(t, events[1], `"delta":{"content":"It is mild."}`)
	assert.Contains(t, events[2], `"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"f","arguments":""}}]`)
	assert.Contains(t, events[3], `"tool_calls":[{"index":0,"function":{"arguments":"{\"a\":1}"}}]`)
	assert.Contains(t, events[4], `"finish_reason":"tool_calls"`)
	var usage struct {
		Choices []any
		Usage   map[string]int
	}
	require.NoError(t, json.Unmarshal([]byte(events[5]), &usage))
	assert.Empty(t, usage.Choices)
	assert.Equal(t, 7, usage.Usage["total_tokens"])
	assert.Equal(t, "[DONE]", events[6])
}

// The fast decoder and encoding/json agree: they accept the same bodies and decode them to the
// same values, so the parser behaves as encoding/json does.
func FuzzFastDecoderAgreesWithEncodingJSON(f *testing.F) {
	f.Add(sdkBody(f))
	f.Add([]byte(`{"model":"m","messages":[{"role":"user","content":"a\u00e9\ud83d\ude00 \"q\""}],"model":"n","stream":true}`))
	f.Add([]byte(`{"Model":"m","MESSAGES":[{"role":"tool","tool_call_id":"c","content":[{"type":"text","text":"x"}]}],"temperature":1e-7,"max_tokens":12}`))
	f.Add([]byte("{\"model\":\"\xff\xfe\",\"messages\":[]}"))
	f.Add([]byte(`{"model":"m","messages":[{"role":"user"}]} x`))
	f.Add([]byte(`{"model":"m","messages":[{"role":"user","content":"\ud800"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"a":[1,2,{"b":null}]}}}]}`))
	f.Add([]byte(`{"model":"claude","max_tokens":5,"system":[{"type":"text","text":"s"}],"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"x"}]}]}`))
	f.Add([]byte(`{"model":"gpt","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]},{"type":"function_call_output","call_id":"c","output":"{}"}],"tools":[{"type":"function","name":"f"}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		// Every type decodeObject is given.
		agree[chatBody](t, body)
		agree[messagesBody](t, body)
		agree[anthropicBlock](t, body)
		agree[responsesBody](t, body)
		agree[responsesItem](t, body)
		agree[embeddingsBody](t, body)
	})
}

// agree decodes body into a T with both decoders and requires the same outcome.
func agree[T any](t *testing.T, body []byte) {
	var fast, std T
	fastErr, stdErr := jsonv1.Unmarshal(body, &fast), json.Unmarshal(body, &std)
	require.Equal(t, stdErr == nil, fastErr == nil, "%T accepted by one decoder only: %q (encoding/json: %v; fast: %v)", std, body, stdErr, fastErr)
	if stdErr == nil { // otherwise decodeObject takes encoding/json's path
		assert.Equal(t, std, fast, "%T %q", std, body)
	}
}
