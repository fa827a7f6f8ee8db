package normalize

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/callsite"
	"github.com/reprise-dev/reprise/replaycase"
	"github.com/reprise-dev/reprise/wireapi"
)

// buildResponsesRun builds the recorded run openinference-responses (responses.create under
// @arizeai/openinference-instrumentation-openai, which records the request but its input as
// llm.invocation_parameters) with the members of extra added to each call's parameters.
func buildResponsesRun(t *testing.T, extra string) (*replaycase.Case, []replaycase.Reason) {
	return buildWithInvocationParameters(t, "openinference-responses", extra)
}

// A Responses call's structured output, text.format, recorded in llm.invocation_parameters, is
// read as the live Responses request's is: the format object, compact with sorted keys, and
// its output type; the call-site id covers it, so a live request for that schema computes the
// recorded id. A text.format that is no format object is reported (invalid_parameter), as a
// malformed Chat response_format is, never read as "no format".
func TestResponsesTextFormatFromInvocationParameters(t *testing.T) {
	const format = `{"type":"json_schema","name":"weather","strict":true,"schema":{"type":"object","properties":{"temp_c":{"type":"number"}}}}`
	const want = `{"name":"weather","schema":{"properties":{"temp_c":{"type":"number"}},"type":"object"},"strict":true,"type":"json_schema"}`
	c, findings := buildResponsesRun(t, `{"text":{"format":`+format+`,"verbosity":"low"}}`)
	require.Empty(t, findings)
	calls := anthropicCalls(c) // every model call of the run
	require.NotEmpty(t, calls)
	for _, st := range calls {
		require.Equal(t, replaycase.APIOpenAIResponses, st.API)
		assert.Equal(t, "json", st.ModelConfig.OutputType)
		assert.Equal(t, want, st.ModelConfig.ResponseFormat)
		assert.Contains(t, st.CallSiteFields, callsite.FieldResponseFormat)
	}
	live, err := wireapi.ParseResponsesRequest([]byte(`{"model":"gpt-4.1-mini","input":"x","text":{"format":` + format + `}}`))
	require.NoError(t, err)
	assert.Equal(t, live.Params.ResponseFormat, calls[0].ModelConfig.ResponseFormat, "the form a live request is read in")

	for _, bad := range []string{`{"text":{"format":"json"}}`, `{"text":"json"}`, `{"text":{"format":{"schema":{}}}}`} {
		c, findings := buildResponsesRun(t, bad)
		require.NotEmpty(t, findings, bad)
		for _, f := range findings {
			assert.Equal(t, replaycase.ReasonInvalidParameter, f.Code, bad)
			assert.Contains(t, f.Detail, "llm.invocation_parameters", bad)
			assert.Contains(t, f.Detail, "text", bad)
		}
		for _, st := range anthropicCalls(c) {
			assert.Empty(t, st.ModelConfig.ResponseFormat, bad)
		}
	}

	// Without text.format nothing is asked for, and nothing is invented.
	c, findings = buildResponsesRun(t, `{"text":{"verbosity":"low"}}`)
	require.Empty(t, findings)
	for _, st := range anthropicCalls(c) {
		assert.Empty(t, st.ModelConfig.ResponseFormat)
		assert.Empty(t, st.ModelConfig.OutputType)
	}
}
