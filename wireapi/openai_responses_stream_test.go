package wireapi

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// responsesStream is the replayed Responses stream of recordedStep (a text and a tool call).
func responsesStream(t *testing.T) []byte {
	w := httptest.NewRecorder()
	WriteResponsesResponse(w, &ResponsesRequest{Stream: true}, recordedStep())
	return w.Body.Bytes()
}

// A message item is added with an empty content list, as the API sends it: SDK stream helpers
// append the content parts to it.
func TestResponsesStreamAddsMessageWithEmptyContent(t *testing.T) {
	var added []map[string]any
	for _, ev := range strings.Split(string(responsesStream(t)), "\n\n") {
		_, data, ok := strings.Cut(ev, "data: ")
		if !ok || !strings.HasPrefix(ev, "event: response.output_item.added\n") {
			continue
		}
		var e struct{ Item map[string]any }
		require.NoError(t, json.Unmarshal([]byte(data), &e))
		added = append(added, e.Item)
	}
	require.Len(t, added, 2)
	assert.Equal(t, "message", added[0]["type"])
	assert.Equal(t, []any{}, added[0]["content"], "a message item is added with content []")
	assert.Equal(t, "function_call", added[1]["type"])
	assert.NotContains(t, added[1], "content")
}

// The openai Python SDK's responses.stream() helper reads the replayed stream to the end (when
// the test venv of test/python is installed).
func TestResponsesStreamReadByThePythonSDK(t *testing.T) {
	python, err := filepath.Abs(filepath.Join("..", "test", "python", ".venv", "bin", "python"))
	require.NoError(t, err)
	if _, err := os.Stat(python); err != nil {
		t.Skip("no test/python/.venv: run scripts/test.sh once to install it")
	}
	stream := filepath.Join(t.TempDir(), "responses.sse")
	require.NoError(t, os.WriteFile(stream, responsesStream(t), 0o600))
	const script = `
import sys, httpx, openai
body = open(sys.argv[1], "rb").read()
transport = httpx.MockTransport(lambda req: httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body))
client = openai.OpenAI(api_key="x", base_url="http://replay/v1", http_client=httpx.Client(transport=transport))
with client.responses.stream(model="m", input="hi") as s:
    for _ in s:
        pass
    r = s.get_final_response()
print(r.output_text, r.output[1].call_id, r.output[1].arguments)
`
	out, err := exec.Command(python, "-c", script, stream).CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Equal(t, `It is mild. c1 {"a":1}`, strings.TrimSpace(string(out)))
}

// A recorded response cut short at the token limit or by a content filter replays as the API
// sent it, incomplete with the reason, in the JSON answer and as the stream's last event; it was
// replayed as completed, so an agent that checks the status (the OpenAI Agents SDK raises on
// incomplete) behaved differently in replay than when it was recorded.
func TestResponsesIncompleteStatus(t *testing.T) {
	for finish, want := range map[string]string{"length": "max_output_tokens", "model_context_window_exceeded": "max_output_tokens", "content_filter": "content_filter", "stop": "", "tool_call": ""} {
		st := recordedStep()
		st.OutputMessages[0].FinishReason = finish
		var body struct {
			Status            string
			IncompleteDetails *struct{ Reason string }     `json:"incomplete_details"`
			Usage             *struct{ TotalTokens int64 } `json:"usage"`
		}
		require.NoError(t, json.Unmarshal(ResponsesResponseJSON(&ResponsesRequest{}, st), &body))
		require.NotNil(t, body.Usage, finish)
		w := httptest.NewRecorder()
		WriteResponsesResponse(w, &ResponsesRequest{Stream: true}, st)
		events := strings.Split(strings.TrimSpace(w.Body.String()), "\n\n")
		last := events[len(events)-1]
		if want == "" {
			assert.Equal(t, "completed", body.Status, finish)
			assert.Nil(t, body.IncompleteDetails, finish)
			assert.True(t, strings.HasPrefix(last, "event: response.completed\n"), finish)
			continue
		}
		assert.Equal(t, "incomplete", body.Status, finish)
		require.NotNil(t, body.IncompleteDetails, finish)
		assert.Equal(t, want, body.IncompleteDetails.Reason, finish)
		assert.True(t, strings.HasPrefix(last, "event: response.incomplete\n"), "%s: %s", finish, last)
		assert.Contains(t, last, `"status":"incomplete"`)
	}
}
