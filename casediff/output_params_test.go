package casediff

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/replaycase"
)

// A changed output format or sampling parameter of a model call is a model_config_changed
// finding, as a changed top_p is, and so is a changed reasoning, tool or output setting; a
// changed JSON schema, thinking budget or token bias names the member that changed.
func TestChangedOutputFormatAndSamplingAreFound(t *testing.T) {
	base := fixtureCase(t, testfixtures.OTelEvents)
	first := -1
	for i, st := range base.Steps {
		if st.Kind == replaycase.StepLLM {
			first = i
			break
		}
	}
	require.GreaterOrEqual(t, first, 0)
	k, n, pen := int64(40), int64(2), 0.5
	base.Steps[first].ModelConfig.ResponseFormat = `{"json_schema":{"name":"weather","schema":{"type":"object"}},"type":"json_schema"}`
	base.Steps[first].ModelConfig.OutputType = "json"
	base.Steps[first].ModelConfig.TopK = &k
	base.Steps[first].ModelConfig.Thinking = `{"budget_tokens":2048,"type":"enabled"}`
	base.Steps[first].ModelConfig.LogitBias = `{"50256":-100}`
	noParallel := false
	for _, tc := range []struct {
		change        func(mc *replaycase.ModelConfig)
		path          string
		before, after any
	}{
		{func(mc *replaycase.ModelConfig) { k2 := int64(41); mc.TopK = &k2 }, "top_k", int64(40), int64(41)},
		{func(mc *replaycase.ModelConfig) { mc.ChoiceCount = &n }, "choice_count", nil, int64(2)},
		{func(mc *replaycase.ModelConfig) { mc.FrequencyPenalty = &pen }, "frequency_penalty", nil, 0.5},
		{func(mc *replaycase.ModelConfig) { mc.PresencePenalty = &pen }, "presence_penalty", nil, 0.5},
		{func(mc *replaycase.ModelConfig) { mc.OutputType = "text" }, "output_type", "json", "text"},
		{func(mc *replaycase.ModelConfig) {
			mc.ResponseFormat = `{"json_schema":{"name":"forecast","schema":{"type":"object"}},"type":"json_schema"}`
		}, "response_format.json_schema.name", "weather", "forecast"},
		{func(mc *replaycase.ModelConfig) { mc.ReasoningEffort = "high" }, "reasoning_effort", nil, "high"},
		{func(mc *replaycase.ModelConfig) { mc.ReasoningSummary = "auto" }, "reasoning_summary", nil, "auto"},
		{func(mc *replaycase.ModelConfig) { mc.Thinking = `{"budget_tokens":8192,"type":"enabled"}` }, "thinking.budget_tokens", int64(2048), int64(8192)},
		{func(mc *replaycase.ModelConfig) { mc.ParallelToolCalls = &noParallel }, "parallel_tool_calls", nil, false},
		{func(mc *replaycase.ModelConfig) { mc.Verbosity = "low" }, "verbosity", nil, "low"},
		{func(mc *replaycase.ModelConfig) { mc.LogitBias = `{"50256":-50}` }, "logit_bias.50256", int64(-100), int64(-50)},
	} {
		t.Run(tc.path, func(t *testing.T) {
			b := clone(t, base)
			tc.change(&b.Steps[first].ModelConfig)
			r := Compare(base, b)
			require.Len(t, r.Findings, 1, "%+v", r.Findings)
			f := r.Findings[0]
			assert.Equal(t, ModelConfigChanged, f.Type)
			assert.Equal(t, fmt.Sprintf("steps[%d].model_config.%s", first, tc.path), f.PathA)
			assert.Equal(t, f.PathA, f.PathB)
			if tc.before != nil {
				assert.EqualValues(t, fmt.Sprint(tc.before), fmt.Sprint(f.Before))
			}
			assert.EqualValues(t, fmt.Sprint(tc.after), fmt.Sprint(f.After))
		})
	}
	assert.Empty(t, Compare(base, clone(t, base)).Findings)
}
