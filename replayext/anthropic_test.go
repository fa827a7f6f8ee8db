package replayext

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/internal/testfixtures"
)

// asAnthropic turns a recorded Chat Completions request into the Messages request that asks
// for the same model call: system apart, tool calls as tool_use blocks, results as
// tool_result blocks in a user turn.
func asAnthropic(chat map[string]any) map[string]any {
	out := map[string]any{"model": chat["model"], "max_tokens": chat["max_tokens"]}
	if v, ok := chat["temperature"]; ok {
		out["temperature"] = v
	}
	var msgs []any
	for _, m := range chat["messages"].([]any) {
		msg := m.(map[string]any)
		switch msg["role"] {
		case "system":
			out["system"] = msg["content"]
		case "tool":
			msgs = append(msgs, map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": msg["tool_call_id"], "content": msg["content"]}}})
		case "assistant":
			var blocks []any
			for _, c := range msg["tool_calls"].([]any) {
				tc := c.(map[string]any)
				fn := tc["function"].(map[string]any)
				blocks = append(blocks, map[string]any{"type": "tool_use", "id": tc["id"], "name": fn["name"], "input": json.RawMessage(fn["arguments"].(string))})
			}
			msgs = append(msgs, map[string]any{"role": "assistant", "content": blocks})
		default:
			msgs = append(msgs, map[string]any{"role": msg["role"], "content": msg["content"]})
		}
	}
	out["messages"] = msgs
	var tools []any
	for _, tl := range chat["tools"].([]any) {
		fn := tl.(map[string]any)["function"].(map[string]any)
		tools = append(tools, map[string]any{"name": fn["name"], "description": fn["description"], "input_schema": fn["parameters"]})
	}
	out["tools"] = tools
	return out
}

func TestAnthropicMessagesReplay(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	cases := writeDataset(t, root, testfixtures.OTelEvents)
	s := startReplay(t, root, nil)
	path := "/v1/cases/" + cases[0].CaseID + "/anthropic/v1/messages"
	chat := sdkRequests(t)

	resp, body := s.do("POST", path, asAnthropic(chat[0]), nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	var msg struct {
		ID, Type, Role string
		StopReason     string `json:"stop_reason"`
		Content        []struct {
			Type, ID, Name, Text string
			Input                map[string]any
		}
		Usage struct {
			InputTokens  int64 `json:"input_tokens"`
			OutputTokens int64 `json:"output_tokens"`
		}
	}
	require.NoError(t, json.Unmarshal(body, &msg))
	assert.Equal(t, "message", msg.Type)
	assert.Equal(t, "tool_use", msg.StopReason)
	require.Len(t, msg.Content, 1)
	assert.Equal(t, "tool_use", msg.Content[0].Type)
	assert.Equal(t, "call_1_0", msg.Content[0].ID, "the recorded call id")
	assert.Equal(t, map[string]any{"city": "Paris", "unit": "celsius"}, msg.Content[0].Input)

	second := asAnthropic(chat[1])
	second["stream"] = true
	resp, body = s.do("POST", path, second, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	var types []string
	text := ""
	for _, e := range readSSE(t, body) {
		var ev struct {
			Type  string
			Delta struct{ Type, Text string }
		}
		require.NoError(t, json.Unmarshal([]byte(e), &ev))
		types = append(types, ev.Type)
		if ev.Delta.Type == "text_delta" {
			text += ev.Delta.Text
		}
	}
	assert.Equal(t, []string{"message_start", "content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop"}, types)
	assert.Contains(t, text, "Paris")

	// A miss is an Anthropic-shaped error.
	changed := asAnthropic(chat[0])
	changed["system"] = "You are terse."
	resp, body = s.do("POST", path, changed, nil)
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	var miss struct {
		Type  string
		Error struct {
			Type, Message string
			Paths         []string
		}
	}
	require.NoError(t, json.Unmarshal(body, &miss))
	assert.Equal(t, "error", miss.Type)
	assert.Equal(t, "not_found_error", miss.Error.Type)
	assert.Equal(t, []string{"messages[0].content[0].text"}, miss.Error.Paths)
}

func TestAnthropicHybridGoesLive(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	cases := writeDataset(t, root, testfixtures.OTelEvents)
	u := startUpstream(t)
	s := startReplay(t, root, func(c *Config) { c.Mode = ModeHybrid; c.Upstream.Anthropic.Endpoint = u.URL })
	changed := asAnthropic(sdkRequests(t)[0])
	changed["system"] = "You are terse."
	resp, _ := s.do("POST", "/v1/cases/"+cases[0].CaseID+"/anthropic/v1/messages", changed, map[string]string{"X-Api-Key": "sk-ant-client"})
	assert.Equal(t, "true", resp.Header.Get(headerLive))
	require.Equal(t, 1, u.count())
	assert.Equal(t, "/v1/messages", u.calls[0].URL.Path)
	assert.Equal(t, "sk-ant-client", u.calls[0].Header.Get("X-Api-Key"))
}

// An unreachable upstream is replay's own answer: a 502 in Anthropic's error shape.
func TestAnthropicUnreachableUpstreamIsAnAnthropicError(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	cases := writeDataset(t, root, testfixtures.OTelEvents)
	u := startUpstream(t)
	s := startReplay(t, root, func(c *Config) { c.Mode = ModeHybrid; c.Upstream.Anthropic.Endpoint = u.URL })
	u.Close() // nothing listens there any more
	changed := asAnthropic(sdkRequests(t)[0])
	changed["system"] = "You are terse."
	resp, body := s.do("POST", "/v1/cases/"+cases[0].CaseID+"/anthropic/v1/messages", changed, nil)
	assert.Equal(t, http.StatusBadGateway, resp.StatusCode)
	var e struct {
		Type  string
		Error struct{ Type, Message string }
	}
	require.NoError(t, json.Unmarshal(body, &e), string(body))
	assert.Equal(t, "error", e.Type)
	assert.Equal(t, "api_error", e.Error.Type)
	assert.Contains(t, e.Error.Message, "could not be reached")
}
