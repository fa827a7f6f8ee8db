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
	"github.com/reprise-dev/reprise/casediff"
)

// An Anthropic call recorded with structured output (OpenInference records the request's
// output_config in llm.invocation_parameters) is answered for a request asking for the same
// format, in either spelling, and missed by one asking for another or none. The miss names
// the field by its name (a top-level field of the request is a fixed name, never a value) in
// the 404 and in the divergence log, and never a value of the schema.
func TestAnthropicOutputFormatReplays(t *testing.T) {
	const weather = `{"type":"json_schema","schema":{"type":"object","properties":{"temp_c":{"type":"number"}}}}`
	structuredCall := map[string]any{
		"openinference.span.kind": "LLM", "llm.system": "anthropic", "llm.model_name": "claude-haiku-4-5",
		"llm.invocation_parameters":             `{"model":"claude-haiku-4-5","max_tokens":256,"output_config":{"format":` + weather + `}}`,
		"llm.input_messages.0.message.role":     "user",
		"llm.input_messages.0.message.content":  "Weather in Paris?",
		"llm.output_messages.0.message.role":    "assistant",
		"llm.output_messages.0.message.content": `{"temp_c":14}`,
		"llm.token_count.prompt":                int64(20),
		"llm.token_count.completion":            int64(6),
		"llm.finish_reason":                     "end_turn",
	}
	textCall := map[string]any{ // GenAI semconv, with the output type asked for
		"gen_ai.operation.name": "chat", "gen_ai.provider.name": "anthropic", "gen_ai.request.model": "claude-haiku-4-5",
		"gen_ai.request.max_tokens": int64(256), "gen_ai.output.type": "text",
		"gen_ai.input.messages":  `[{"role":"user","parts":[{"type":"text","content":"Weather in Paris?"}]}]`,
		"gen_ai.output.messages": `[{"role":"assistant","parts":[{"type":"text","content":"It is 14C in Paris."}],"finish_reason":"end_turn"}]`,
	}
	root := filepath.Join(t.TempDir(), "data")
	cases := writeRuns(t, root, nil, agentRun(1, structuredCall), agentRun(2, textCall))
	require.Len(t, cases, 2)
	structured, text := cases[0], cases[1]
	require.Contains(t, structured.Steps[len(structured.Steps)-1].CallSiteFields, callsite.FieldResponseFormat)
	s := startReplay(t, root, nil)

	request := func(member string) map[string]any {
		body := map[string]any{"model": "claude-haiku-4-5", "max_tokens": 256, "messages": []any{map[string]any{"role": "user", "content": "Weather in Paris?"}}}
		if member != "" {
			var extra map[string]any
			require.NoError(t, json.Unmarshal([]byte(member), &extra))
			for k, v := range extra {
				body[k] = v
			}
		}
		return body
	}
	const fahrenheit = `{"type":"json_schema","schema":{"type":"object","properties":{"temp_f":{"type":"number"}}}}`
	for i, tc := range []struct {
		caseID, member string
		answer         string   // "" for a miss
		paths          []string // of the miss
	}{
		{structured.CaseID, `{"output_config":{"format":` + weather + `}}`, `{"temp_c":14}`, nil},
		{structured.CaseID, `{"output_format":` + weather + `}`, `{"temp_c":14}`, nil}, // the beta spelling
		{structured.CaseID, ``, "", []string{"output_type", "response_format"}},
		// Below the top level an object whose keys differ is reported whole: a key may be a value.
		{structured.CaseID, `{"output_config":{"format":` + fahrenheit + `}}`, "", []string{"response_format.schema.properties"}},
		{text.CaseID, ``, "It is 14C in Paris.", nil},
		{text.CaseID, `{"output_config":{"format":` + weather + `}}`, "", []string{"output_type"}},
	} {
		session := fmt.Sprintf("anthropic-format-%d", i)
		resp, body := s.do("POST", "/v1/cases/"+tc.caseID+"/anthropic/v1/messages", request(tc.member), map[string]string{headerSession: session})
		if tc.answer != "" {
			require.Equal(t, http.StatusOK, resp.StatusCode, "%d: %s", i, body)
			assert.Equal(t, tc.answer, anthropicAnswer(t, body), "%d", i)
			continue
		}
		require.Equal(t, http.StatusNotFound, resp.StatusCode, "%d: %s", i, body)
		var miss struct {
			Type  string
			Error struct{ Paths []string }
		}
		require.NoError(t, json.Unmarshal(body, &miss), "%d: %s", i, body)
		assert.Equal(t, "error", miss.Type, "%d: Anthropic's error shape", i)
		assert.Equal(t, tc.paths, miss.Error.Paths, "%d", i)
		assert.NotContains(t, string(body), "temp_", "%d: no value of the schema", i)

		resp, log := s.do("GET", "/v1/divergences?session="+session, nil, nil)
		require.Equal(t, http.StatusOK, resp.StatusCode, string(log))
		assert.NotContains(t, string(log), "temp_", "%d: no value of the schema", i)
		divs := divergencesOf(t, s, session)
		require.Len(t, divs, 1, "%d", i)
		assert.True(t, divs[0].Refused)
		assert.Equal(t, tc.paths, divs[0].Paths, "%d", i)
		for _, f := range divs[0].Findings {
			assert.Equal(t, casediff.ModelConfigChanged, f.Type, "%d", i)
		}
	}

	// A badly shaped format is the API's 400, naming the field.
	resp, body := s.do("POST", "/v1/cases/"+structured.CaseID+"/anthropic/v1/messages", request(`{"output_config":{"format":"json"}}`), nil)
	require.Equal(t, http.StatusBadRequest, resp.StatusCode, string(body))
	assert.Contains(t, string(body), "output_config.format")
}
