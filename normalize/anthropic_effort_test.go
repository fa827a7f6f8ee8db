package normalize

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/internal/pdatawalk"
)

// Anthropic's output_config.effort is read from a recorded request, as from a live one: from
// OpenInference's llm.invocation_parameters and from its input.value, the request body, where
// the parameters do not have it.
func TestAnthropicEffortIsReadFromTheRecordedRequest(t *testing.T) {
	c, findings := buildWithInvocationParameters(t, "anthropic-openinference-create", `{"output_config":{"effort":"low"}}`)
	require.Empty(t, findings)
	for _, st := range anthropicCalls(c) {
		assert.Equal(t, "low", st.ModelConfig.ReasoningEffort, "llm.invocation_parameters")
	}

	td, ld := recordedRun(t, "node", "anthropic-openinference-create")
	planted := 0
	for s := range pdatawalk.Spans(td) {
		a := s.Span.Attributes()
		if body, ok := a.Get("input.value"); ok && strings.HasPrefix(body.Str(), `{"model":"claude`) {
			a.PutStr("input.value", `{"output_config":{"effort":"high"},`+strings.TrimPrefix(body.Str(), "{"))
			planted++
		}
	}
	require.Equal(t, 2, planted)
	c, findings, _ = Build(td, ld)
	require.Empty(t, findings)
	calls := anthropicCalls(c)
	require.Len(t, calls, 2)
	for _, st := range calls {
		assert.Equal(t, "high", st.ModelConfig.ReasoningEffort, "input.value")
	}
}
