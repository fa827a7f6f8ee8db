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

// asResponses turns a recorded Chat Completions request into the Responses request that asks
// for the same model call: instructions, input items, flat function tools.
func asResponses(t testing.TB, chat map[string]any) map[string]any {
	out := map[string]any{"model": chat["model"]}
	for _, k := range []string{"temperature", "top_p"} {
		if v, ok := chat[k]; ok {
			out[k] = v
		}
	}
	if v, ok := chat["max_tokens"]; ok {
		out["max_output_tokens"] = v
	}
	var input []any
	for _, m := range chat["messages"].([]any) {
		msg := m.(map[string]any)
		switch msg["role"] {
		case "system":
			out["instructions"] = msg["content"]
		case "tool":
			input = append(input, map[string]any{"type": "function_call_output", "call_id": msg["tool_call_id"], "output": msg["content"]})
		case "assistant":
			for _, c := range msg["tool_calls"].([]any) {
				tc := c.(map[string]any)
				fn := tc["function"].(map[string]any)
				input = append(input, map[string]any{"type": "function_call", "id": "fc_" + tc["id"].(string), "call_id": tc["id"], "name": fn["name"], "arguments": fn["arguments"]})
			}
		default:
			input = append(input, map[string]any{"role": msg["role"], "content": msg["content"]})
		}
	}
	out["input"] = input
	var tools []any
	for _, tl := range chat["tools"].([]any) {
		fn := tl.(map[string]any)["function"].(map[string]any)
		tools = append(tools, map[string]any{"type": "function", "name": fn["name"], "description": fn["description"], "parameters": fn["parameters"]})
	}
	out["tools"] = tools
	require.NotEmpty(t, input)
	return out
}

type responsesAnswer struct {
	ID     string
	Object string
	Status string
	Output []struct {
		Type, ID, Name, Arguments, Role string
		CallID                          string `json:"call_id"`
		Content                         []struct{ Type, Text string }
	}
	Usage struct {
		TotalTokens int64 `json:"total_tokens"`
	}
}

func TestResponsesReplaysARecordedConversation(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	cases := writeDataset(t, root, testfixtures.OTelEvents)
	s := startReplay(t, root, nil)
	base := "/v1/cases/" + cases[0].CaseID + "/openai/v1/responses"
	chat := sdkRequests(t)
	first, second := asResponses(t, chat[0]), asResponses(t, chat[1])

	resp, body := s.do("POST", base, first, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	var a responsesAnswer
	require.NoError(t, json.Unmarshal(body, &a))
	assert.Equal(t, "response", a.Object)
	assert.Equal(t, "completed", a.Status)
	assert.Equal(t, "chatcmpl-1", a.ID, "the recorded response id")
	require.Len(t, a.Output, 1)
	call := a.Output[0]
	assert.Equal(t, "function_call", call.Type)
	assert.Equal(t, "call_1_0", call.CallID, "the recorded call id")
	assert.Equal(t, "fc_call_1_0", call.ID)
	assert.Equal(t, "get_weather", call.Name)
	assert.JSONEq(t, `{"city":"Paris","unit":"celsius"}`, call.Arguments)

	// The whole conversation, the same by previous_response_id, and by item_reference.
	byPrevious := map[string]any{}
	for k, v := range second {
		byPrevious[k] = v
	}
	items := second["input"].([]any)
	byPrevious["previous_response_id"] = a.ID
	byPrevious["input"] = items[len(items)-1:] // the function_call_output alone
	byReference := map[string]any{}
	for k, v := range second {
		byReference[k] = v
	}
	byReference["input"] = append(append(append([]any{}, items[:len(items)-2]...), map[string]any{"type": "item_reference", "id": call.ID}), items[len(items)-1])
	for name, req := range map[string]map[string]any{"whole": second, "previous_response_id": byPrevious, "item_reference": byReference} {
		resp, body := s.do("POST", base, req, map[string]string{headerSession: name})
		require.Equal(t, http.StatusOK, resp.StatusCode, name+": "+string(body))
		var b responsesAnswer
		require.NoError(t, json.Unmarshal(body, &b))
		require.Len(t, b.Output, 1, name)
		assert.Equal(t, "message", b.Output[0].Type, name)
		assert.Equal(t, "output_text", b.Output[0].Content[0].Type, name)
		assert.Contains(t, b.Output[0].Content[0].Text, "Paris", name)
		assert.Equal(t, cases[0].Steps[len(cases[0].Steps)-1].Usage.TotalTokens, b.Usage.TotalTokens, name)
	}

	// A reference the case did not record names the field.
	bad := map[string]any{"model": first["model"], "input": "hi", "previous_response_id": "resp_unknown"}
	resp, body = s.do("POST", base, bad, nil)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Contains(t, string(body), `"param":"previous_response_id"`)

	resp, body = s.do("GET", base+"/"+a.ID, nil, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	assert.Contains(t, string(body), `"call_id":"call_1_0"`)
}

func TestResponsesStreamsTheAPIsEvents(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	cases := writeDataset(t, root, testfixtures.OTelEvents)
	s := startReplay(t, root, nil)
	req := asResponses(t, sdkRequests(t)[0])
	req["stream"] = true
	resp, body := s.do("POST", "/v1/cases/"+cases[0].CaseID+"/openai/v1/responses", req, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	assert.NotContains(t, string(body), "[DONE]")
	var types []string
	var args string
	for i, e := range readSSE(t, body) {
		var ev struct {
			Type           string
			SequenceNumber *int `json:"sequence_number"`
			Delta          string
			Response       *responsesAnswer
		}
		require.NoError(t, json.Unmarshal([]byte(e), &ev))
		require.NotNil(t, ev.SequenceNumber, ev.Type)
		assert.Equal(t, i, *ev.SequenceNumber)
		types = append(types, ev.Type)
		if ev.Type == "response.function_call_arguments.delta" {
			args += ev.Delta
		}
		if ev.Type == "response.completed" {
			assert.Equal(t, int64(96), ev.Response.Usage.TotalTokens)
		}
	}
	assert.Equal(t, []string{"response.created", "response.in_progress", "response.output_item.added",
		"response.function_call_arguments.delta", "response.function_call_arguments.done", "response.output_item.done", "response.completed"}, types)
	assert.JSONEq(t, `{"city":"Paris","unit":"celsius"}`, args)
}

// On the base URL that names no case, a reference resolves in the case the session was served
// last. A session served nothing yet has no such case: its previous_response_id was refused as
// "not found in the replayed case", which named no case and no way out; the answer says why
// and names the scoped base URL.
func TestAReferenceBeforeAnyAnswerOnTheUnscopedBaseURLNamesTheScopedOne(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	writeDataset(t, root, testfixtures.OTelEvents)
	s := startReplay(t, root, nil)
	chat := sdkRequests(t)
	first, second := asResponses(t, chat[0]), asResponses(t, chat[1])
	items := second["input"].([]any)
	second["previous_response_id"] = "chatcmpl-1"
	second["input"] = items[len(items)-1:] // the function_call_output alone

	resp, body := s.do("POST", "/openai/v1/responses", second, map[string]string{headerSession: "fresh"})
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode, string(body))
	assert.Contains(t, string(body), `"param":"previous_response_id"`)
	assert.Contains(t, string(body), "This session has been served no recorded model call yet")
	assert.Contains(t, string(body), "/v1/cases/{case_id}/openai/v1")

	session := map[string]string{headerSession: "served"}
	resp, body = s.do("POST", "/openai/v1/responses", first, session)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	resp, body = s.do("POST", "/openai/v1/responses", second, session)
	assert.Equal(t, http.StatusOK, resp.StatusCode, "the reference resolves in the case served: %s", body)
}
