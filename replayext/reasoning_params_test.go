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

// A model call recorded with a reasoning effort is answered only for a request with the same
// effort: in strict mode a request with another effort, or none, misses it naming the field,
// instead of being served the answer reasoned with other settings.
func TestReasoningEffortMissesARecordingOfAnotherEffort(t *testing.T) {
	lowCall := map[string]any{ // OpenInference, with the effort in the invocation parameters
		"openinference.span.kind": "LLM", "llm.system": "openai", "llm.model_name": "o4-mini",
		"llm.invocation_parameters":             `{"model":"o4-mini","reasoning_effort":"low"}`,
		"llm.input_messages.0.message.role":     "user",
		"llm.input_messages.0.message.content":  "Weather in Paris?",
		"llm.output_messages.0.message.role":    "assistant",
		"llm.output_messages.0.message.content": "It is 14C in Paris.",
		"llm.token_count.prompt":                int64(20),
		"llm.token_count.completion":            int64(6),
		"llm.finish_reason":                     "stop",
	}
	root := filepath.Join(t.TempDir(), "data")
	cases := writeRuns(t, root, nil, agentRun(1, lowCall))
	require.Len(t, cases, 1)
	low := cases[0]
	assert.Contains(t, low.Steps[len(low.Steps)-1].CallSiteFields, callsite.FieldReasoningEffort)
	s := startReplay(t, root, nil)

	for i, tc := range []struct {
		effort any
		answer string // "" for a miss
	}{
		{"low", "It is 14C in Paris."},
		{"high", ""},
		{nil, ""},
	} {
		body := map[string]any{"model": "o4-mini", "messages": []any{map[string]any{"role": "user", "content": "Weather in Paris?"}}}
		if tc.effort != nil {
			body["reasoning_effort"] = tc.effort
		}
		session := map[string]string{"X-Replay-Session": fmt.Sprintf("s%d", i)}
		resp, got := s.do("POST", "/v1/cases/"+low.CaseID+"/openai/v1/chat/completions", body, session)
		if tc.answer != "" {
			require.Equal(t, http.StatusOK, resp.StatusCode, "%d: %s", i, got)
			assert.Equal(t, tc.answer, chatAnswer(t, got), "%d", i)
			continue
		}
		require.Equal(t, http.StatusNotFound, resp.StatusCode, "%d: %s", i, got)
		var miss struct{ Error struct{ Paths []string } }
		require.NoError(t, json.Unmarshal(got, &miss))
		assert.Equal(t, []string{"reasoning_effort"}, miss.Error.Paths, "%d", i)
	}
}
