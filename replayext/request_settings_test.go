package replayext

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A model call recorded with parallel_tool_calls, verbosity and logit_bias is answered only
// for a request that sends the same ones: in strict mode a request that changes one of them
// (or leaves it out) misses naming that field, instead of being served the answer the model
// gave under other settings.
func TestRequestSettingsMissARecordingOfOtherSettings(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	cases := writeRuns(t, root, nil, agentRun(1, parisCall(`{"model":"o4-mini","parallel_tool_calls":false,"verbosity":"low","logit_bias":{"50256":-100}}`)))
	require.Len(t, cases, 1)
	recorded := cases[0]
	fields := recorded.Steps[len(recorded.Steps)-1].CallSiteFields
	for _, f := range []string{"parallel_tool_calls", "verbosity", "logit_bias"} {
		assert.Contains(t, fields, f)
	}
	s := startReplay(t, root, nil)

	for i, tc := range []struct {
		change func(body map[string]any)
		miss   string // the field a miss names, "" for the recorded answer
	}{
		{func(map[string]any) {}, ""},
		{func(b map[string]any) { b["logit_bias"] = map[string]any{"50256": -100.0} }, ""}, // the same bias, spelled as a float
		{func(b map[string]any) { b["parallel_tool_calls"] = true }, "parallel_tool_calls"},
		{func(b map[string]any) { delete(b, "parallel_tool_calls") }, "parallel_tool_calls"}, // the API's default is true
		{func(b map[string]any) { b["verbosity"] = "high" }, "verbosity"},
		{func(b map[string]any) { delete(b, "verbosity") }, "verbosity"},
		{func(b map[string]any) { b["logit_bias"] = map[string]any{"50256": -50} }, "logit_bias.50256"},
		{func(b map[string]any) { delete(b, "logit_bias") }, "logit_bias"},
	} {
		body := parisRequest()
		body["parallel_tool_calls"], body["verbosity"], body["logit_bias"] = false, "low", map[string]any{"50256": -100}
		tc.change(body)
		askParis(t, s, recorded.CaseID, i, body, tc.miss)
	}
}
