package wireapi

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/replaycase"
)

// refusedStep is a recorded call the model refused (OpenLLMetry records message.refusal as a
// refusal part).
func refusedStep() *replaycase.Step {
	return &replaycase.Step{CallSiteID: "cs_0124", StartTime: time.Unix(1764460800, 0), ModelConfig: replaycase.ModelConfig{RequestModel: "gpt-4o-mini"},
		OutputMessages: []replaycase.Message{{Role: "assistant", FinishReason: "stop", Parts: []replaycase.Part{{Type: "refusal", Content: "I can't help with that."}}}}}
}

// A recorded refusal is replayed as the message's refusal, in the JSON answer and in the stream;
// it was dropped, and the agent got an answer with no content and no refusal.
func TestChatResponseCarriesTheRefusal(t *testing.T) {
	var body struct {
		Choices []struct{ Message map[string]any }
	}
	require.NoError(t, json.Unmarshal(ChatResponseJSON(refusedStep()), &body))
	assert.Equal(t, map[string]any{"role": "assistant", "content": nil, "refusal": "I can't help with that."}, body.Choices[0].Message)
	assert.NotContains(t, string(ChatResponseJSON(recordedStep())), "refusal", "no refusal key when none was recorded")

	w := httptest.NewRecorder()
	WriteChatResponse(w, &ChatRequest{Stream: true}, refusedStep())
	assert.Contains(t, w.Body.String(), `"delta":{"refusal":"I can't help with that."}`)
}

// The openai Python SDK reads the refusal from the JSON answer and from the stream helper (when
// the test venv of test/python is installed).
func TestChatRefusalReadByThePythonSDK(t *testing.T) {
	python, err := filepath.Abs(filepath.Join("..", "test", "python", ".venv", "bin", "python"))
	require.NoError(t, err)
	if _, err := os.Stat(python); err != nil {
		t.Skip("no test/python/.venv: run scripts/test.sh once to install it")
	}
	dir := t.TempDir()
	w := httptest.NewRecorder()
	WriteChatResponse(w, &ChatRequest{Stream: true}, refusedStep())
	require.NoError(t, os.WriteFile(filepath.Join(dir, "stream"), w.Body.Bytes(), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "json"), ChatResponseJSON(refusedStep()), 0o600))
	const script = `
import sys, httpx, openai
def client(name, ctype):
    body = open(sys.argv[1] + "/" + name, "rb").read()
    transport = httpx.MockTransport(lambda req: httpx.Response(200, headers={"content-type": ctype}, content=body))
    return openai.OpenAI(api_key="x", base_url="http://replay/v1", http_client=httpx.Client(transport=transport))
msgs = [{"role": "user", "content": "hi"}]
print(client("json", "application/json").chat.completions.create(model="m", messages=msgs).choices[0].message.refusal)
with client("stream", "text/event-stream").chat.completions.stream(model="m", messages=msgs) as s:
    for _ in s:
        pass
    print(s.get_final_completion().choices[0].message.refusal)
`
	out, err := exec.Command(python, "-c", script, dir).CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Equal(t, "I can't help with that.\nI can't help with that.", strings.TrimSpace(string(out)))
}

// The Responses answer carries the refusal as the message's refusal part, in the JSON answer and
// in the stream (response.refusal.delta and .done); it was dropped, and the answer had no output.
func TestResponsesResponseCarriesTheRefusal(t *testing.T) {
	var body struct {
		Output []struct {
			Type    string
			Content []map[string]any
		}
	}
	require.NoError(t, json.Unmarshal(ResponsesResponseJSON(&ResponsesRequest{}, refusedStep()), &body))
	require.Len(t, body.Output, 1)
	assert.Equal(t, []map[string]any{{"type": "refusal", "refusal": "I can't help with that."}}, body.Output[0].Content)

	w := httptest.NewRecorder()
	WriteResponsesResponse(w, &ResponsesRequest{Stream: true}, refusedStep())
	assert.Contains(t, w.Body.String(), "event: response.refusal.done\n")

	python, err := filepath.Abs(filepath.Join("..", "test", "python", ".venv", "bin", "python"))
	require.NoError(t, err)
	if _, err := os.Stat(python); err != nil {
		t.Skip("no test/python/.venv: run scripts/test.sh once to install it")
	}
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "stream"), w.Body.Bytes(), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "json"), ResponsesResponseJSON(&ResponsesRequest{}, refusedStep()), 0o600))
	const script = `
import sys, httpx, openai
def client(name, ctype):
    body = open(sys.argv[1] + "/" + name, "rb").read()
    transport = httpx.MockTransport(lambda req: httpx.Response(200, headers={"content-type": ctype}, content=body))
    return openai.OpenAI(api_key="x", base_url="http://replay/v1", http_client=httpx.Client(transport=transport))
print(client("json", "application/json").responses.create(model="m", input="hi").output[0].content[0].refusal)
with client("stream", "text/event-stream").responses.stream(model="m", input="hi") as s:
    for _ in s:
        pass
    print(s.get_final_response().output[0].content[0].refusal)
`
	out, err := exec.Command(python, "-c", script, dir).CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Equal(t, "I can't help with that.\nI can't help with that.", strings.TrimSpace(string(out)))
}
