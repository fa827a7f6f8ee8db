package wireapi

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/replaycase"
)

func TestParseMessagesRequest(t *testing.T) {
	r, err := ParseMessagesRequest([]byte(`{"model":"claude-sonnet-4-5","max_tokens":256,"system":[{"type":"text","text":"Be brief."}],
		"tools":[{"name":"get_weather","input_schema":{"type":"object"}}],
		"messages":[{"role":"user","content":"Paris?"},
		{"role":"assistant","content":[{"type":"thinking","thinking":"…","signature":"s"},{"type":"text","text":"Checking."},{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{"city":"Paris"}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"14C"}]},{"type":"text","text":"And Lyon?"}]}]}`))
	require.NoError(t, err)
	assert.Equal(t, int64(256), *r.Params.MaxTokens)
	assert.Equal(t, []replaycase.Message{
		{Role: "system", Parts: []replaycase.Part{{Type: "text", Content: "Be brief."}}},
		{Role: "user", Parts: []replaycase.Part{{Type: "text", Content: "Paris?"}}},
		{Role: "assistant", Parts: []replaycase.Part{{Type: "text", Content: "Checking."}, {Type: "tool_call", ID: "toolu_1", Name: "get_weather", Arguments: `{"city":"Paris"}`}}},
		{Role: "tool", Parts: []replaycase.Part{{Type: "tool_call_response", ID: "toolu_1", Response: "14C"}}},
		{Role: "user", Parts: []replaycase.Part{{Type: "text", Content: "And Lyon?"}}},
	}, r.Messages)
}

func TestParseMessagesRequestNamesTheField(t *testing.T) {
	for body, param := range map[string]string{
		`{"max_tokens":1,"messages":[{"role":"user","content":"x"}]}`:                                                                          "model",
		`{"model":"m","messages":[{"role":"user","content":"x"}]}`:                                                                             "max_tokens",
		`{"model":"m","max_tokens":1}`:                                                                                                         "messages",
		`{"model":"m","max_tokens":1,"messages":[{"role":"system","content":"x"}]}`:                                                            "messages[0].role",
		`{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"image_x"}]}]}`:                                             "messages[0].content[0].type",
		`{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"x"}],"tools":[{"type":"web_search_20250305","name":"web_search"}]}`: "tools[0].type",
	} {
		_, err := ParseMessagesRequest([]byte(body))
		var re *RequestError
		require.True(t, errors.As(err, &re), body)
		assert.Equal(t, param, re.Param, body)
	}
}

// A recorded refusal (content_filter in the GenAI conventions' enum, refusal as Anthropic sends
// it) and a paused turn are replayed as such, not as end_turn.
func TestAnthropicStopReasons(t *testing.T) {
	for recorded, want := range map[string]string{"": "end_turn", "stop": "end_turn", "tool_call": "tool_use", "length": "max_tokens",
		"content_filter": "refusal", "refusal": "refusal", "pause_turn": "pause_turn"} {
		st := &replaycase.Step{OutputMessages: []replaycase.Message{{Role: "assistant", FinishReason: recorded, Parts: []replaycase.Part{{Type: "text", Content: "x"}}}}}
		var msg struct {
			StopReason string `json:"stop_reason"`
		}
		require.NoError(t, json.Unmarshal(MessagesResponseJSON(st), &msg))
		assert.Equal(t, want, msg.StopReason, "recorded %q", recorded)
	}
}
