package replayext

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/callsite"
)

// A model call recorded with its output format is answered only for a request that asks for
// the same format: in strict mode a request for JSON misses a recording made for text (and the
// other way round), naming the differing field, instead of being served the text answer.
func TestOutputFormatMissesARecordingOfAnotherFormat(t *testing.T) {
	textCall := map[string]any{ // GenAI semconv, with the output type asked for
		"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-4o-mini",
		"gen_ai.output.type":     "text",
		"gen_ai.input.messages":  `[{"role":"user","parts":[{"type":"text","content":"Weather in Paris?"}]}]`,
		"gen_ai.output.messages": `[{"role":"assistant","parts":[{"type":"text","content":"It is 14C in Paris."}],"finish_reason":"stop"}]`,
	}
	jsonCall := map[string]any{ // OpenInference, with the JSON schema asked for in the invocation parameters
		"openinference.span.kind": "LLM", "llm.system": "openai", "llm.model_name": "gpt-4o-mini",
		"llm.invocation_parameters":             `{"model":"gpt-4o-mini","response_format":{"type":"json_schema","json_schema":{"name":"weather","schema":{"type":"object"}}}}`,
		"llm.input_messages.0.message.role":     "user",
		"llm.input_messages.0.message.content":  "Weather in Paris?",
		"llm.output_messages.0.message.role":    "assistant",
		"llm.output_messages.0.message.content": `{"temp_c":14}`,
		"llm.token_count.prompt":                int64(20),
		"llm.token_count.completion":            int64(6),
		"llm.finish_reason":                     "stop",
	}
	root := filepath.Join(t.TempDir(), "data")
	cases := writeRuns(t, root, nil, agentRun(1, textCall), agentRun(2, jsonCall))
	require.Len(t, cases, 2)
	text, structured := cases[0], cases[1]
	assert.Contains(t, text.Steps[len(text.Steps)-1].CallSiteFields, callsite.FieldOutputType)
	assert.Contains(t, structured.Steps[len(structured.Steps)-1].CallSiteFields, callsite.FieldResponseFormat)
	s := startReplay(t, root, nil)

	request := func(format any) map[string]any {
		body := map[string]any{"model": "gpt-4o-mini", "messages": []any{map[string]any{"role": "user", "content": "Weather in Paris?"}}}
		if format != nil {
			body["response_format"] = format
		}
		return body
	}
	jsonObject := map[string]any{"type": "json_object"}
	weather := map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "weather", "schema": map[string]any{"type": "object"}}}
	forecast := map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "forecast", "schema": map[string]any{"type": "object"}}}
	// A field only one side has is reported by its name (diffRequest): output_type alone when
	// the recording names no response_format.
	for i, tc := range []struct {
		caseID string
		format any
		answer string // "" for a miss
		paths  []string
	}{
		{text.CaseID, nil, "It is 14C in Paris.", nil},
		{text.CaseID, map[string]any{"type": "text"}, "It is 14C in Paris.", nil},
		{text.CaseID, jsonObject, "", []string{"output_type"}},
		{text.CaseID, weather, "", []string{"output_type"}},
		{structured.CaseID, weather, `{"temp_c":14}`, nil},
		{structured.CaseID, nil, "", []string{"output_type", "response_format"}},
		{structured.CaseID, jsonObject, "", []string{"response_format"}},
		{structured.CaseID, forecast, "", []string{"response_format.json_schema.name"}},
	} {
		session := map[string]string{"X-Replay-Session": fmt.Sprintf("s%d", i)}
		resp, body := s.do("POST", "/v1/cases/"+tc.caseID+"/openai/v1/chat/completions", request(tc.format), session)
		if tc.answer != "" {
			require.Equal(t, http.StatusOK, resp.StatusCode, "%d: %s", i, body)
			assert.Equal(t, tc.answer, chatAnswer(t, body), "%d", i)
			continue
		}
		require.Equal(t, http.StatusNotFound, resp.StatusCode, "%d: %s", i, body)
		var miss struct{ Error struct{ Paths []string } }
		require.NoError(t, json.Unmarshal(body, &miss))
		assert.Equal(t, tc.paths, miss.Error.Paths, "%d", i)
	}
}
