package wireapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/replaycase"
)

// legacyBody is a Chat Completions request of legacy function calling, as the openai SDK sends
// it, with a tool as well.
const legacyBody = `{"model":"gpt-4o-mini","temperature":0,"function_call":{"name":"get_weather"},
 "tools":[{"type":"function","function":{"name":"lookup"}}],
 "functions":[{"name":"get_weather","description":"Current weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}],
 "messages":[{"role":"user","content":"What is the weather in Paris today?"},
  {"role":"assistant","content":"Let me look.","function_call":{"name":"get_weather","arguments":"{\"city\": \"Paris\"}"}},
  {"role":"function","name":"get_weather","content":"14C"}]}`

// Legacy function calling is read as tool calling (call-site id version 2), as OpenInference
// records it: the assistant's function_call as a tool call without an id, after the message's
// content; functions as tools, after the tools; the top-level function_call as the tool choice.
// Version1 is the request as version 1 read it: without any of them.
func TestParseLegacyFunctionCalling(t *testing.T) {
	r, err := ParseChatRequest([]byte(legacyBody))
	require.NoError(t, err)
	require.Len(t, r.Messages, 3)
	assert.Equal(t, []replaycase.Part{{Type: "text", Content: "Let me look."}, {Type: "tool_call", Name: "get_weather", Arguments: `{"city": "Paris"}`}}, r.Messages[1].Parts)
	assert.Equal(t, replaycase.Message{Role: "tool", Name: "get_weather", Parts: []replaycase.Part{{Type: "text", Content: "14C"}}}, r.Messages[2])
	require.Len(t, r.Tools, 2)
	assert.Equal(t, []string{"lookup", "get_weather"}, []string{r.Tools[0].Name, r.Tools[1].Name})
	assert.Equal(t, `{"name":"get_weather"}`, r.Params.ToolChoice)
	require.NoError(t, r.ReadToolSchemas())
	assert.JSONEq(t, `{"type":"object","properties":{"city":{"type":"string"}}}`, r.Tools[1].Parameters)

	require.NotNil(t, r.Version1)
	assert.Equal(t, []replaycase.Part{{Type: "text", Content: "Let me look."}}, r.Version1.Messages[1].Parts)
	assert.Equal(t, r.Messages[0], r.Version1.Messages[0])
	assert.Equal(t, r.Messages[2], r.Version1.Messages[2])
	require.Len(t, r.Version1.Tools, 1)
	assert.Equal(t, "lookup", r.Version1.Tools[0].Name)
	assert.Empty(t, r.Version1.Params.ToolChoice)
	assert.Len(t, r.Messages[1].Parts, 2, "the version-1 reading does not cut the request's own")

	// tool_choice wins over function_call; a body without legacy fields has no second reading.
	r, err = ParseChatRequest([]byte(`{"model":"m","tool_choice":"none","function_call":"auto","messages":[{"role":"user","content":"hi"}]}`))
	require.NoError(t, err)
	assert.Equal(t, "none", r.Params.ToolChoice)
	assert.Nil(t, r.Version1)
	r, err = ParseChatRequest(sdkBody(t))
	require.NoError(t, err)
	assert.Nil(t, r.Version1)

	// Recorded invocation parameters (OpenInference keeps function_call there) read the same.
	mc, err := ParseChatParams([]byte(`{"model":"m","function_call":"auto"}`))
	require.NoError(t, err)
	assert.Equal(t, "auto", mc.ToolChoice)
}

func TestParseRefusesMalformedLegacyFunctionCalling(t *testing.T) {
	msgs := `"messages":[{"role":"user","content":"hi"}]`
	for _, c := range []struct{ name, body, param, code string }{
		{"function without name", `{"model":"m",` + msgs + `,"functions":[{"parameters":{}}]}`, "functions[0].name", "missing_required_parameter"},
		{"function null", `{"model":"m",` + msgs + `,"functions":[null]}`, "functions[0].name", "missing_required_parameter"},
		{"function schema a string", `{"model":"m",` + msgs + `,"functions":[{"name":"f","parameters":"x"}]}`, "functions[0].parameters", "invalid_type"},
		{"function_call a string", `{"model":"m","messages":[{"role":"assistant","function_call":"f"}]}`, "messages.function_call", "invalid_type"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseChatRequest([]byte(c.body))
			var re *RequestError
			require.True(t, errors.As(err, &re), "%v", err)
			assert.Equal(t, c.param, re.Param)
			assert.Equal(t, c.code, re.Code)
		})
	}
}

// The version-1 reading of any body is what the body without its legacy fields reads to: the
// request with functions, the top-level function_call and each message's function_call removed
// (keys matched as the decoder matches them, case-insensitively), or the body's own reading
// when it has none. So version-1 ids of live requests are those of the code that did not read
// legacy function calling.
// Run: go test -run '^$' -fuzz FuzzVersion1ReadingIgnoresLegacyFields ./wireapi/
func FuzzVersion1ReadingIgnoresLegacyFields(f *testing.F) {
	f.Add([]byte(legacyBody))
	f.Add([]byte(`{"model":"m","Function_Call":"auto","FUNCTIONS":[{"name":"f"}],"messages":[{"role":"assistant","tool_calls":[{"id":"c","function":{"name":"g","arguments":"{}"}}],"function_call":{"name":"f","arguments":"[1e400]"}},{"role":"tool","tool_call_id":"c","function_call":{"name":"x"},"content":[{"type":"text","text":"a"}]}]}`))
	f.Add([]byte(`{"model":"m","tool_choice":null,"function_call":null,"functions":[],"messages":[{"role":"user","content":"hi","function_call":null}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := ParseChatRequest(body)
		if err != nil {
			return
		}
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber() // numbers as written
		var m map[string]any
		if dec.Decode(&m) != nil {
			return
		}
		strip := func(m map[string]any, keys ...string) {
			for k := range m {
				for _, name := range keys {
					if strings.EqualFold(k, name) {
						delete(m, k)
					}
				}
			}
		}
		strip(m, "functions", "function_call")
		for k, v := range m {
			if strings.EqualFold(k, "messages") {
				if msgs, ok := v.([]any); ok {
					for _, msg := range msgs {
						if mm, ok := msg.(map[string]any); ok {
							strip(mm, "function_call")
						}
					}
				}
			}
		}
		stripped, err := json.Marshal(m)
		require.NoError(t, err)
		want, err := ParseChatRequest(stripped)
		if err != nil {
			// Duplicate keys that differ in case decode differently through a map: not this
			// property's concern.
			t.Skip()
		}
		got := ChatReading{Messages: r.Messages, Tools: r.Tools, Params: r.Params}
		if r.Version1 != nil {
			got = *r.Version1
		}
		assert.Equal(t, emptyAsNil(ChatReading{Messages: want.Messages, Tools: want.Tools, Params: want.Params}), emptyAsNil(got), "%s", body)
	})
}

// emptyAsNil is r with empty lists nil: the call-site form does not tell them apart.
func emptyAsNil(r ChatReading) ChatReading {
	r.Messages = slices.Clone(r.Messages)
	for i := range r.Messages {
		if len(r.Messages[i].Parts) == 0 {
			r.Messages[i].Parts = nil
		}
	}
	if len(r.Tools) == 0 {
		r.Tools = nil
	}
	return r
}
