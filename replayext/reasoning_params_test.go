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
	root := filepath.Join(t.TempDir(), "data")
	cases := writeRuns(t, root, nil, agentRun(1, parisCall(`{"model":"o4-mini","reasoning_effort":"low"}`)))
	require.Len(t, cases, 1)
	low := cases[0]
	assert.Contains(t, low.Steps[len(low.Steps)-1].CallSiteFields, callsite.FieldReasoningEffort)
	s := startReplay(t, root, nil)

	for i, tc := range []struct {
		effort any
		miss   string // the field a miss names, "" for the recorded answer
	}{
		{"low", ""},
		{"high", "reasoning_effort"},
		{nil, "reasoning_effort"},
	} {
		body := parisRequest()
		if tc.effort != nil {
			body["reasoning_effort"] = tc.effort
		}
		askParis(t, s, low.CaseID, i, body, tc.miss)
	}
}

// parisCall is an OpenInference model call asked "Weather in Paris?" with the invocation
// parameters given, which answered "It is 14C in Paris.".
func parisCall(params string) map[string]any {
	return map[string]any{
		"openinference.span.kind": "LLM", "llm.system": "openai", "llm.model_name": "o4-mini",
		"llm.invocation_parameters":             params,
		"llm.input_messages.0.message.role":     "user",
		"llm.input_messages.0.message.content":  "Weather in Paris?",
		"llm.output_messages.0.message.role":    "assistant",
		"llm.output_messages.0.message.content": "It is 14C in Paris.",
		"llm.token_count.prompt":                int64(20),
		"llm.token_count.completion":            int64(6),
		"llm.finish_reason":                     "stop",
	}
}

// parisRequest is the Chat Completions body of parisCall's question, its settings aside.
func parisRequest() map[string]any {
	return map[string]any{"model": "o4-mini", "messages": []any{map[string]any{"role": "user", "content": "Weather in Paris?"}}}
}

// askParis sends body to the case's Chat Completions endpoint in a session of its own (i) and
// checks the outcome: parisCall's answer when miss is "", else a 404 naming miss alone.
func askParis(t *testing.T, s *server, caseID string, i int, body map[string]any, miss string) {
	t.Helper()
	session := map[string]string{"X-Replay-Session": fmt.Sprintf("s%d", i)}
	resp, got := s.do("POST", "/v1/cases/"+caseID+"/openai/v1/chat/completions", body, session)
	if miss == "" {
		require.Equal(t, http.StatusOK, resp.StatusCode, "%d: %s", i, got)
		assert.Equal(t, "It is 14C in Paris.", chatAnswer(t, got), "%d", i)
		return
	}
	require.Equal(t, http.StatusNotFound, resp.StatusCode, "%d: %s", i, got)
	var missed struct{ Error struct{ Paths []string } }
	require.NoError(t, json.Unmarshal(got, &missed))
	assert.Equal(t, []string{miss}, missed.Error.Paths, "%d", i)
}
