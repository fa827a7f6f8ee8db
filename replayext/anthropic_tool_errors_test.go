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

// weatherTurns is an Anthropic Messages request whose get_weather lookup is sent back as a
// tool_result; isError is the block's is_error member as JSON ("" leaves it out).
func weatherTurns(isError string) map[string]any {
	result := map[string]any{"type": "tool_result", "tool_use_id": "toolu_1", "content": "weather service unavailable"}
	if isError != "" {
		result["is_error"] = json.RawMessage(isError)
	}
	return map[string]any{"model": "claude-haiku-4-5", "max_tokens": 256, "messages": []any{
		map[string]any{"role": "user", "content": "Weather in Paris?"},
		map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": map[string]any{"city": "Paris"}}}},
		map[string]any{"role": "user", "content": []any{result}},
	}}
}

// anthropicCallWithBody is an Anthropic call as openinference-instrumentation-anthropic records
// it: the request body as input.value, the answer as output messages.
func anthropicCallWithBody(t *testing.T, body map[string]any, answer string) map[string]any {
	raw, err := json.Marshal(body)
	require.NoError(t, err)
	return map[string]any{
		"openinference.span.kind": "LLM", "llm.system": "anthropic", "llm.model_name": "claude-haiku-4-5",
		"input.mime_type": "application/json", "input.value": string(raw),
		"llm.output_messages.0.message.role":    "assistant",
		"llm.output_messages.0.message.content": answer,
		"llm.token_count.prompt":                int64(30),
		"llm.token_count.completion":            int64(8),
		"llm.finish_reason":                     "end_turn",
	}
}

// A tool failure the agent reported to the model (tool_result is_error) is part of the request:
// a recording of the failure answers the same failure and misses the same text sent as a
// success, and a recording of the success misses the failure, in strict mode. A request that
// spells the success out (is_error false) is the request that leaves it out.
func TestAnthropicToolResultIsErrorReplays(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	cases := writeRuns(t, root, nil,
		agentRun(1, anthropicCallWithBody(t, weatherTurns("true"), "The weather service is down.")),
		agentRun(2, anthropicCallWithBody(t, weatherTurns(""), "Paris: unavailable.")))
	require.Len(t, cases, 2)
	failed, succeeded := cases[0], cases[1]
	for _, c := range cases {
		require.Contains(t, c.Steps[len(c.Steps)-1].CallSiteFields, callsite.FieldIsError)
	}
	s := startReplay(t, root, nil)
	for i, tc := range []struct {
		caseID, isError string
		answer          string // "" for a miss
	}{
		{failed.CaseID, "true", "The weather service is down."},
		{failed.CaseID, "", ""},
		{failed.CaseID, "false", ""},
		{succeeded.CaseID, "", "Paris: unavailable."},
		{succeeded.CaseID, "false", "Paris: unavailable."},
		{succeeded.CaseID, "true", ""},
	} {
		session := fmt.Sprintf("tool-error-%d", i)
		resp, body := s.do("POST", "/v1/cases/"+tc.caseID+"/anthropic/v1/messages", weatherTurns(tc.isError), map[string]string{headerSession: session})
		if tc.answer == "" {
			require.Equal(t, http.StatusNotFound, resp.StatusCode, "%d: %s", i, body)
			assert.NotContains(t, string(body), "unavailable", "%d: no value in the miss", i)
			divs := divergencesOf(t, s, session)
			require.Len(t, divs, 1, "%d", i)
			assert.True(t, divs[0].Refused, "%d", i)
			// The tool message, whole: below the top level a member one side lacks is a key.
			assert.Equal(t, []string{"messages[2]"}, divs[0].Paths, "%d", i)
			require.Len(t, divs[0].Findings, 1, "%d", i)
			assert.Equal(t, casediff.ToolResultChanged, divs[0].Findings[0].Type, "%d", i)
			continue
		}
		require.Equal(t, http.StatusOK, resp.StatusCode, "%d: %s", i, body)
		assert.Equal(t, tc.answer, anthropicAnswer(t, body), "%d", i)
	}
}
