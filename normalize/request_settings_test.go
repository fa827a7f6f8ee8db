package normalize

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/internal/testfixtures"
)

// parallel_tool_calls, verbosity and logit_bias recorded in the invocation parameters are read
// as a live request's are: a call made with other settings is another model call.
func TestRequestSettingsAreRead(t *testing.T) {
	c, findings, spanID := plant(t, testfixtures.OpenInference, "OpenAI Chat Completions", func(sp ptrace.Span) {
		sp.Attributes().PutStr("llm.invocation_parameters", `{"model":"gpt-5-mini","parallel_tool_calls":false,"verbosity":"low","logit_bias":{"50256":-100}}`)
	})
	require.Empty(t, findings)
	mc := stepOf(t, c, spanID).ModelConfig
	require.NotNil(t, mc.ParallelToolCalls)
	assert.False(t, *mc.ParallelToolCalls)
	assert.Equal(t, "low", mc.Verbosity)
	assert.Equal(t, `{"50256":-100}`, mc.LogitBias)

	// The Responses API's spelling, text.verbosity, beside its format.
	c, findings = buildResponsesRun(t, `{"parallel_tool_calls":true,"text":{"verbosity":"high"}}`)
	require.Empty(t, findings)
	calls := anthropicCalls(c)
	require.NotEmpty(t, calls)
	for _, st := range calls {
		require.NotNil(t, st.ModelConfig.ParallelToolCalls)
		assert.True(t, *st.ModelConfig.ParallelToolCalls)
		assert.Equal(t, "high", st.ModelConfig.Verbosity)
	}
}
