package normalize

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/internal/pdatawalk"
	"github.com/reprise-dev/reprise/replaycase"
)

// OpenInference's Anthropic instrumentation records the whole request but its messages as
// llm.invocation_parameters: the structured output asked for there (output_config.format, or
// the beta output_format) is read as Chat's response_format is, so that a recording made for
// JSON output is another model call than one made for text.
func TestAnthropicOutputFormatFromInvocationParameters(t *testing.T) {
	const schema = `{"type":"json_schema","schema":{"type":"object","properties":{"temp_c":{"type":"number"}}}}`
	const want = `{"schema":{"properties":{"temp_c":{"type":"number"}},"type":"object"},"type":"json_schema"}`
	for name, member := range map[string]string{
		"GA output_config.format": `{"output_config":{"effort":"low","format":` + schema + `}}`,
		"beta output_format":      `{"output_format":` + schema + `}`,
	} {
		c, findings := buildWithInvocationParameters(t, "anthropic-openinference-create", member)
		require.Empty(t, findings, name)
		for _, st := range anthropicCalls(c) {
			assert.Equal(t, "json", st.ModelConfig.OutputType, name)
			assert.Equal(t, want, st.ModelConfig.ResponseFormat, name)
		}
	}

	// A recorded format that is no format object is reported, not read as "no format".
	c, findings := buildWithInvocationParameters(t, "anthropic-openinference-create", `{"output_config":{"format":"json"}}`)
	require.Len(t, findings, 2, "%v", findings) // one per call
	assert.Equal(t, replaycase.ReasonInvalidParameter, findings[0].Code)
	assert.Contains(t, findings[0].Detail, "llm.invocation_parameters")
	assert.Contains(t, findings[0].Detail, "output_config.format")
	for _, st := range anthropicCalls(c) {
		assert.Empty(t, st.ModelConfig.ResponseFormat)
	}
}

// buildWithInvocationParameters builds a recorded run of test/node whose two model calls record
// llm.invocation_parameters, with the members of extra added to each call's parameters.
func buildWithInvocationParameters(t *testing.T, run, extra string) (*replaycase.Case, []replaycase.Reason) {
	t.Helper()
	td, ld := recordedRun(t, "node", run)
	planted := 0
	for s := range pdatawalk.Spans(td) {
		planted += addInvocationParameters(t, s.Span, extra)
	}
	require.Equal(t, 2, planted)
	c, findings, _ := Build(td, ld)
	return c, findings
}

func addInvocationParameters(t *testing.T, sp ptrace.Span, extra string) int {
	v, ok := sp.Attributes().Get("llm.invocation_parameters")
	if !ok {
		return 0
	}
	var params, add map[string]any
	require.NoError(t, json.Unmarshal([]byte(v.Str()), &params))
	require.NoError(t, json.Unmarshal([]byte(extra), &add))
	for k, v := range add {
		params[k] = v
	}
	b, err := json.Marshal(params)
	require.NoError(t, err)
	sp.Attributes().PutStr("llm.invocation_parameters", string(b))
	return 1
}

func anthropicCalls(c *replaycase.Case) []replaycase.Step {
	var out []replaycase.Step
	for _, st := range c.Steps {
		if st.Kind == replaycase.StepLLM {
			out = append(out, st)
		}
	}
	return out
}
