package replayext

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// vercelOpenAIRun is the recorded run test/node vercel-openai-generate (AI SDK 6, the OpenAI
// Responses API: two get_weather results, then the answer) as trace n, with the Paris result's
// output replaced by output when output is not nil.
func vercelOpenAIRun(t *testing.T, n byte, output map[string]any) ptrace.Traces {
	raw, err := os.ReadFile("../normalize/testdata/node/vercel-openai-generate/traces.json")
	require.NoError(t, err)
	td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(raw)
	require.NoError(t, err)
	spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	for i := 0; i < spans.Len(); i++ {
		sp := spans.At(i)
		sp.SetTraceID(pcommon.TraceID{0x7e, 0x5c, n, 15: 1})
		v, ok := sp.Attributes().Get("ai.prompt.messages")
		if !ok || output == nil {
			continue
		}
		var msgs []map[string]any
		require.NoError(t, json.Unmarshal([]byte(v.Str()), &msgs))
		for _, m := range msgs {
			parts, _ := m["content"].([]any)
			for _, p := range parts {
				if part := p.(map[string]any); part["type"] == "tool-result" && part["toolCallId"] == "call_1_0" {
					part["output"] = output
				}
			}
		}
		edited, err := json.Marshal(msgs)
		require.NoError(t, err)
		v.SetStr(string(edited))
	}
	return td
}

// vercelOpenAIAnswerRequest is the Responses request @ai-sdk/openai sends for the run's answer,
// the Paris lookup's result being paris: the SDK sends a failed result's value as the output,
// as the Responses API has no failure mark.
func vercelOpenAIAnswerRequest(paris string) map[string]any {
	call := func(id, item, city string) map[string]any {
		return map[string]any{"type": "function_call", "call_id": id, "id": item, "name": "get_weather", "arguments": `{"city":"` + city + `"}`}
	}
	return map[string]any{
		"model": "gpt-4.1-mini", "temperature": 0.2, "tool_choice": "auto",
		"tools": []any{map[string]any{"type": "function", "name": "get_weather", "description": "Current weather for a city", "strict": false,
			"parameters": map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []any{"city"}, "additionalProperties": false}}},
		"input": []any{
			map[string]any{"role": "system", "content": "You are a weather assistant."},
			map[string]any{"role": "user", "content": []any{map[string]any{"type": "input_text", "text": "Weather in Paris and Lyon?"}}},
			call("call_1_0", "fc_1_0", "Paris"), call("call_1_1", "fc_1_1", "Lyon"),
			map[string]any{"type": "function_call_output", "call_id": "call_1_0", "output": paris},
			map[string]any{"type": "function_call_output", "call_id": "call_1_1", "output": `{"city":"Lyon","temperature":14,"sky":"overcast"}`},
		},
	}
}

// A Vercel AI SDK run on the OpenAI Responses API whose tool failed (an error-text output in
// ai.prompt.messages) replays for the request the agent sends again: that API has no failure
// mark, so the SDK sent the failure as the result's text, and so does the live request.
func TestVercelOpenAIFailedToolResultReplays(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	const failure = "weather service unavailable"
	cases := writeRuns(t, root, nil,
		vercelOpenAIRun(t, 1, nil),
		vercelOpenAIRun(t, 2, map[string]any{"type": "error-text", "value": failure}))
	require.Len(t, cases, 2)
	s := startReplay(t, root, nil)
	for i, tc := range []struct{ caseID, paris string }{
		{cases[0].CaseID, `{"city":"Paris","temperature":14,"sky":"overcast"}`},
		{cases[1].CaseID, failure},
	} {
		resp, body := s.do("POST", "/v1/cases/"+tc.caseID+"/openai/v1/responses", vercelOpenAIAnswerRequest(tc.paris), nil)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%d: %s", i, body)
		assert.Contains(t, string(body), "Paris and Lyon: 14 and overcast.", "%d", i)
	}
}

// A refused tool call (AI SDK 6's execution-denied output, no reason recorded) replays for the
// request the agent sends again: @ai-sdk/openai sends "Tool call execution denied." as the
// function_call_output, and the recorded case holds that text.
func TestVercelOpenAIDeniedToolCallReplays(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	cases := writeRuns(t, root, nil, vercelOpenAIRun(t, 3, map[string]any{"type": "execution-denied"}))
	require.Len(t, cases, 1)
	s := startReplay(t, root, nil)
	resp, body := s.do("POST", "/v1/cases/"+cases[0].CaseID+"/openai/v1/responses", vercelOpenAIAnswerRequest("Tool call execution denied."), nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	assert.Contains(t, string(body), "Paris and Lyon: 14 and overcast.")
}
