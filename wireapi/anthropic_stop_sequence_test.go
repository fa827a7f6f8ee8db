package wireapi

import (
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/replaycase"
)

// stopSequenceStep is a Claude answer that the recorded request's stop sequences ended.
func stopSequenceStep(stop ...string) *replaycase.Step {
	return &replaycase.Step{CallSiteID: "cs_0125", ModelConfig: replaycase.ModelConfig{RequestModel: "claude-haiku-4-5", Stop: stop},
		OutputMessages: []replaycase.Message{{Role: "assistant", FinishReason: "stop_sequence", Parts: []replaycase.Part{{Type: "text", Content: "Paris"}}}}}
}

// A stop sequence ends the replayed answer as it ended the recorded one: stop_reason
// "stop_sequence", and stop_sequence names the sequence when the request had only one (the case
// does not record which of several matched: then null, not a guess). The Anthropic Python SDK
// reads both from the JSON answer and from its stream helper.
func TestAnthropicStopSequenceIsReplayed(t *testing.T) {
	for _, tc := range []struct {
		stop []string
		want any
	}{{[]string{"END"}, "END"}, {[]string{"END", "STOP"}, nil}} {
		var msg map[string]any
		require.NoError(t, json.Unmarshal(MessagesResponseJSON(stopSequenceStep(tc.stop...)), &msg))
		assert.Equal(t, "stop_sequence", msg["stop_reason"], "%v", tc.stop)
		assert.Equal(t, tc.want, msg["stop_sequence"], "%v", tc.stop)
		var delta map[string]any
		for _, data := range sseData(t, func(w *httptest.ResponseRecorder) {
			WriteMessagesResponse(w, &MessagesRequest{Stream: true}, stopSequenceStep(tc.stop...))
		}) {
			var ev struct {
				Type  string
				Delta map[string]any
			}
			require.NoError(t, json.Unmarshal([]byte(data), &ev), data)
			if ev.Type == "message_delta" {
				delta = ev.Delta
			}
		}
		assert.Equal(t, map[string]any{"stop_reason": "stop_sequence", "stop_sequence": tc.want}, delta, "%v", tc.stop)
	}

	out := anthropicSDK(t, stopSequenceStep("END"), `
m = client.messages.create(**args)
print(m.stop_reason, m.stop_sequence)
with client.messages.stream(**args) as s:
    for _ in s:
        pass
    m = s.get_final_message()
print(m.stop_reason, m.stop_sequence)
`, `args = dict(model="m", max_tokens=16, stop_sequences=["END"], messages=[{"role": "user", "content": "hi"}])`)
	assert.Equal(t, "stop_sequence END\nstop_sequence END", out)
}

// A step recorded through the Messages API is replayed through Chat Completions with one of that
// API's finish reasons (an agent switching SDKs compares against them): Anthropic's own reasons
// were passed through as they were recorded. A refusal Claude wrote as text with stop_reason
// "refusal" is the message's refusal, as an OpenAI model's refusal is; its words were the content.
func TestAnthropicReasonsReplayedThroughChat(t *testing.T) {
	for recorded, want := range map[string]string{"stop_sequence": "stop", "pause_turn": "stop", "refusal": "stop",
		"model_context_window_exceeded": "length", "length": "length", "tool_call": "tool_calls", "content_filter": "content_filter", "": "stop"} {
		st := stopSequenceStep()
		st.OutputMessages[0].FinishReason = recorded
		var body struct {
			Choices []struct {
				FinishReason string `json:"finish_reason"`
			}
		}
		require.NoError(t, json.Unmarshal(ChatResponseJSON(st), &body))
		assert.Equal(t, want, body.Choices[0].FinishReason, "recorded %q", recorded)
		w := httptest.NewRecorder()
		WriteChatResponse(w, &ChatRequest{Stream: true}, st)
		assert.Contains(t, w.Body.String(), `"finish_reason":"`+want+`"`, "recorded %q, stream", recorded)
	}

	refused := stopSequenceStep()
	refused.OutputMessages[0] = replaycase.Message{Role: "assistant", FinishReason: "refusal", Parts: []replaycase.Part{{Type: "text", Content: "I can't help with that."}}}
	var body struct {
		Choices []struct{ Message map[string]any }
	}
	require.NoError(t, json.Unmarshal(ChatResponseJSON(refused), &body))
	assert.Equal(t, map[string]any{"role": "assistant", "content": nil, "refusal": "I can't help with that."}, body.Choices[0].Message)
	w := httptest.NewRecorder()
	WriteChatResponse(w, &ChatRequest{Stream: true}, refused)
	assert.Contains(t, w.Body.String(), `"delta":{"refusal":"I can't help with that."}`)
	assert.NotContains(t, w.Body.String(), `"content":"I can't`)

	var resp struct {
		Output []struct{ Content []map[string]any }
	}
	require.NoError(t, json.Unmarshal(ResponsesResponseJSON(&ResponsesRequest{}, refused), &resp))
	require.Len(t, resp.Output, 1)
	assert.Equal(t, []map[string]any{{"type": "refusal", "refusal": "I can't help with that."}}, resp.Output[0].Content)

	// Through the Messages API it stays Claude's text with stop_reason "refusal", once.
	var msg struct {
		StopReason string `json:"stop_reason"`
		Content    []map[string]any
	}
	require.NoError(t, json.Unmarshal(MessagesResponseJSON(refused), &msg))
	assert.Equal(t, "refusal", msg.StopReason)
	assert.Equal(t, []map[string]any{{"type": "text", "text": "I can't help with that."}}, msg.Content)
}
