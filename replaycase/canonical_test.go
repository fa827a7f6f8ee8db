package replaycase_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/normalize"
	"github.com/reprise-dev/reprise/replaycase"
)

// The canonical form must carry a case losslessly: the exporter and the replay extension
// rebuild cases from it alone, without reaching into the processor.
func TestCanonicalFormRoundTrip(t *testing.T) {
	for _, run := range []string{testfixtures.OTelEvents, testfixtures.Traceloop, testfixtures.OTelNoContent} {
		t.Run(run, func(t *testing.T) {
			c, findings, genAI := normalize.Build(testfixtures.Traces(t, run), testfixtures.Logs(t, run))
			require.True(t, genAI)
			for _, f := range findings {
				c.Quarantine(f.Code, f.Detail, f.SpanID)
			}
			c.ClosedBy = replaycase.ClosedRootEnded
			c.SelectedBy = "failed_tool"
			c.Metadata = map[string]string{"route": "/weather"}
			c.Assertions = map[string]string{"expected": "mentions Paris weather"}
			c.RawSpans = []byte{0x0a, 0x01, 0x02}
			c.RawEvents = []byte{0x0a, 0x03}
			seed, topK := int64(7), int64(5)
			c.ModelConfig.Seed, c.ModelConfig.Stop, c.ModelConfig.ToolChoice = &seed, []string{"END"}, "auto"
			c.Steps[0].Retrieval.TopK = &topK
			// Every sampling, output and reasoning parameter, on the case and on a model call's step.
			k, n, freq, pres := int64(40), int64(3), 0.5, -0.25
			all := replaycase.ModelConfig{TopK: &k, ChoiceCount: &n, FrequencyPenalty: &freq, PresencePenalty: &pres,
				OutputType: "json", ResponseFormat: `{"json_schema":{"name":"w","schema":{"type":"object"}},"type":"json_schema"}`}
			for _, mc := range []*replaycase.ModelConfig{&c.ModelConfig, &c.Steps[1].ModelConfig} {
				mc.TopK, mc.ChoiceCount, mc.FrequencyPenalty, mc.PresencePenalty = all.TopK, all.ChoiceCount, all.FrequencyPenalty, all.PresencePenalty
				mc.OutputType, mc.ResponseFormat = all.OutputType, all.ResponseFormat
				mc.ReasoningEffort, mc.ReasoningSummary, mc.Thinking = "low", "auto", `{"budget_tokens":2048,"type":"enabled"}`
				parallel := false
				mc.ParallelToolCalls, mc.Verbosity, mc.LogitBias = &parallel, "low", `{"50256":-100}`
			}
			c.Steps[2].Status, c.Steps[2].Error = replaycase.StepError, "TimeoutError"
			c.Steps[2].ToolCall.Error = "TimeoutError"
			require.True(t, markFirstToolResultFailed(c), "the fixture sends a tool result back to the model")
			for _, st := range c.Steps {
				if st.Kind == replaycase.StepLLM {
					require.Equal(t, replaycase.APIOpenAIChatCompletions, st.API, "the round trip must carry the step's API")
				}
			}

			td := ptrace.NewTraces()
			require.NoError(t, replaycase.Encode(c, td))
			assert.Equal(t, 1+len(c.Steps), td.SpanCount())
			got, err := replaycase.Decode(td)
			require.NoError(t, err)
			require.Len(t, got, 1)
			assert.Equal(t, c, got[0])
		})
	}
}

// markFirstToolResultFailed marks the first tool result sent back to the model as a failure
// (Anthropic's is_error), which the input messages' attribute must carry.
func markFirstToolResultFailed(c *replaycase.Case) bool {
	for _, st := range c.Steps {
		for _, m := range st.InputMessages {
			for i := range m.Parts {
				if m.Parts[i].Type == "tool_call_response" {
					m.Parts[i].Error = true
					return true
				}
			}
		}
	}
	return false
}

func TestDecodeRejectsUnknownSchemaVersion(t *testing.T) {
	c, _, _ := normalize.Build(testfixtures.Traces(t, testfixtures.OTelEvents), testfixtures.Logs(t, testfixtures.OTelEvents))
	c.SchemaVersion = "replay-case.v9"
	td := ptrace.NewTraces()
	require.NoError(t, replaycase.Encode(c, td))
	_, err := replaycase.Decode(td)
	assert.ErrorContains(t, err, `unsupported replay.schema_version "replay-case.v9"`)
}

func TestCaseIDIsDeterministic(t *testing.T) {
	a := replaycase.ID("d4263ddf29d4d69a7c3c210379b94a58", "8b727ad3b0efe21a")
	assert.Equal(t, a, replaycase.ID("d4263ddf29d4d69a7c3c210379b94a58", "8b727ad3b0efe21a"))
	assert.Len(t, a, 32)
	assert.True(t, replaycase.IsID(a), "IsID takes the form ID writes")
	assert.False(t, replaycase.IsID(strings.ToUpper(a)), "case ids are stored in lower case")
	assert.False(t, replaycase.IsID(a[1:]))
	assert.NotEqual(t, a, replaycase.ID("d4263ddf29d4d69a7c3c210379b94a58", "50a2c2aa5482a2fb"))
}

// A case without steps round-trips with none (not an empty list), also when another case's
// spans follow it in the same scope (the capacity hint counts them).
func TestCaseWithoutStepsRoundTrips(t *testing.T) {
	c, _, _ := normalize.Build(testfixtures.Traces(t, testfixtures.OTelEvents), testfixtures.Logs(t, testfixtures.OTelEvents))
	c.Steps = nil
	td := ptrace.NewTraces()
	require.NoError(t, replaycase.Encode(c, td))
	other, _, _ := normalize.Build(testfixtures.Traces(t, testfixtures.Traceloop), testfixtures.Logs(t, testfixtures.Traceloop))
	more := ptrace.NewTraces()
	require.NoError(t, replaycase.Encode(other, more))
	more.ResourceSpans().At(0).ScopeSpans().At(0).Spans().MoveAndAppendTo(td.ResourceSpans().At(0).ScopeSpans().At(0).Spans())
	got, err := replaycase.Decode(td)
	require.NoError(t, err)
	require.Len(t, got, 2)
	assert.Equal(t, c, got[0])
	assert.Nil(t, got[0].Steps)
	assert.Equal(t, other.Steps, got[1].Steps)
}

// The mark of a case sent again after a restart travels as replay.case.resent, on the case span
// of a marked case only.
func TestResentTravelsOnlyWhenSet(t *testing.T) {
	for _, resent := range []bool{true, false} {
		c, _, _ := normalize.Build(testfixtures.Traces(t, testfixtures.OTelEvents), testfixtures.Logs(t, testfixtures.OTelEvents))
		c.Resent = resent
		td := ptrace.NewTraces()
		require.NoError(t, replaycase.Encode(c, td))
		_, present := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Attributes().Get(replaycase.AttrResent)
		assert.Equal(t, resent, present)
		got, err := replaycase.Decode(td)
		require.NoError(t, err)
		require.Len(t, got, 1)
		assert.Equal(t, c, got[0])
	}
}
