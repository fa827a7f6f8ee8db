package wireapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/replaycase"
)

// A recorded refusal replayed as an Anthropic message carries the refusal's words as text, with
// stop_reason "refusal", in the JSON answer and in the stream. The content was empty (the
// refusal part was dropped), and with the finish reason OpenAI records for a refusal ("stop")
// the stop reason was end_turn: the agent saw a finished, empty answer.
func TestAnthropicRefusalCarriesItsText(t *testing.T) {
	anthropicRefused := refusedStep()
	anthropicRefused.OutputMessages[0].FinishReason = "refusal"
	for name, st := range map[string]*replaycase.Step{"finish stop": refusedStep(), "finish refusal": anthropicRefused} {
		var msg struct {
			StopReason string `json:"stop_reason"`
			Content    []map[string]any
		}
		require.NoError(t, json.Unmarshal(MessagesResponseJSON(st), &msg))
		assert.Equal(t, "refusal", msg.StopReason, name)
		assert.Equal(t, []map[string]any{{"type": "text", "text": "I can't help with that."}}, msg.Content, name)

		text, stop := "", ""
		for _, data := range sseData(t, func(w *httptest.ResponseRecorder) { WriteMessagesResponse(w, &MessagesRequest{Stream: true}, st) }) {
			var ev struct {
				Delta struct {
					Text       string
					StopReason string `json:"stop_reason"`
				}
			}
			require.NoError(t, json.Unmarshal([]byte(data), &ev), data)
			text, stop = text+ev.Delta.Text, stop+ev.Delta.StopReason
		}
		assert.Equal(t, "I can't help with that.", text, name)
		assert.Equal(t, "refusal", stop, name)
	}

	// The Anthropic Python SDK reads the same message from the JSON answer and from its stream
	// helper (when the test venv of test/python is installed).
	out := anthropicSDK(t, refusedStep(), `
m = client.messages.create(**args)
print(m.stop_reason, m.content[0].text)
with client.messages.stream(**args) as s:
    for _ in s:
        pass
    m = s.get_final_message()
print(m.stop_reason, m.content[0].text)
`, `args = dict(model="m", max_tokens=16, messages=[{"role": "user", "content": "hi"}])`)
	assert.Equal(t, "refusal I can't help with that.\nrefusal I can't help with that.", out)
}

// anthropicSDK runs script with the Anthropic Python SDK's client (max_retries 0) against a
// server that answers every request with st, after the line that sets args, and returns what
// it printed, trimmed. It skips the test without the venv of test/python.
func anthropicSDK(t *testing.T, st *replaycase.Step, script, args string) string {
	t.Helper()
	python, err := filepath.Abs(filepath.Join("..", "test", "python", ".venv", "bin", "python"))
	require.NoError(t, err)
	if _, err := os.Stat(python); err != nil {
		t.Skip("no test/python/.venv: run scripts/test.sh once to install it")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct{ Stream bool }
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		WriteMessagesResponse(w, &MessagesRequest{Stream: body.Stream}, st)
	}))
	defer srv.Close()
	head := "import sys, anthropic\nclient = anthropic.Anthropic(api_key=\"x\", base_url=sys.argv[1], max_retries=0)\n" + args + "\n"
	out, err := exec.Command(python, "-c", head+script, srv.URL).CombinedOutput()
	require.NoError(t, err, "%s", out)
	return strings.TrimSpace(string(out))
}

// Anthropic's model_context_window_exceeded stop reason is replayed as recorded; it became
// end_turn, a finished answer.
func TestAnthropicContextWindowStopReasonIsKept(t *testing.T) {
	st := &replaycase.Step{OutputMessages: []replaycase.Message{{Role: "assistant", FinishReason: "model_context_window_exceeded", Parts: []replaycase.Part{{Type: "text", Content: "x"}}}}}
	var msg struct {
		StopReason string `json:"stop_reason"`
	}
	require.NoError(t, json.Unmarshal(MessagesResponseJSON(st), &msg))
	assert.Equal(t, "model_context_window_exceeded", msg.StopReason)
}
