package normalize

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/replaycase"
)

// The reasoning settings are read from every convention that records them: a call reasoned
// at another effort, or with another thinking budget, is another model call.
func TestReasoningSettingsAreRead(t *testing.T) {
	for _, tc := range []struct {
		name, run, span string
		change          func(a pcommon.Map)
		want            replaycase.ModelConfig // the fields below only
	}{
		{
			name: "OpenLLMetry gen_ai.request.reasoning_*", run: testfixtures.Traceloop, span: "chat gpt-4o-mini",
			change: func(a pcommon.Map) {
				a.PutStr("gen_ai.request.reasoning_effort", "low")
				a.PutStr("gen_ai.request.reasoning_summary", "auto")
			},
			want: replaycase.ModelConfig{ReasoningEffort: "low", ReasoningSummary: "auto"},
		},
		{
			name: "OpenInference Chat reasoning_effort", run: testfixtures.OpenInference, span: "OpenAI Chat Completions",
			change: func(a pcommon.Map) {
				a.PutStr("llm.invocation_parameters", `{"model":"o4-mini","reasoning_effort":"high"}`)
			},
			want: replaycase.ModelConfig{ReasoningEffort: "high"},
		},
		{
			name: "OpenInference Responses reasoning", run: testfixtures.OpenInference, span: "OpenAI Chat Completions",
			change: func(a pcommon.Map) {
				a.PutStr("llm.invocation_parameters", `{"model":"o4-mini","reasoning":{"effort":"medium","summary":"detailed"}}`)
			},
			want: replaycase.ModelConfig{ReasoningEffort: "medium", ReasoningSummary: "detailed"},
		},
		{
			name: "OpenInference Anthropic thinking", run: testfixtures.OpenInference, span: "OpenAI Chat Completions",
			change: func(a pcommon.Map) {
				a.PutStr("llm.invocation_parameters", `{"model":"claude-sonnet-4-5","max_tokens":4096,"thinking":{"type":"enabled","budget_tokens":2048}}`)
			},
			want: replaycase.ModelConfig{Thinking: `{"budget_tokens":2048,"type":"enabled"}`},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, findings, spanID := plant(t, tc.run, tc.span, func(sp ptrace.Span) { tc.change(sp.Attributes()) })
			require.Empty(t, findings)
			assert.Equal(t, tc.want, reasoningParams(stepOf(t, c, spanID).ModelConfig))
		})
	}
}

// Recorded reasoning, tool and output settings that no API accepts are reported, not read as
// "not sent", which would let a request without them match the recording.
func TestMalformedRecordedSettingsAreReported(t *testing.T) {
	for _, params := range []string{
		`{"model":"o4-mini","reasoning_effort":3}`,
		`{"model":"o4-mini","reasoning":"high"}`,
		`{"model":"claude-sonnet-4-5","thinking":{"budget_tokens":2048}}`,
		`{"model":"claude-sonnet-4-5","output_config":{"effort":3}}`,
		`{"model":"gpt-5-mini","parallel_tool_calls":"false"}`,
		`{"model":"gpt-5-mini","verbosity":2}`,
		`{"model":"gpt-5-mini","logit_bias":[1]}`,
	} {
		t.Run(params, func(t *testing.T) {
			_, findings, _ := plant(t, testfixtures.OpenInference, "OpenAI Chat Completions", func(sp ptrace.Span) {
				sp.Attributes().PutStr("llm.invocation_parameters", params)
			})
			require.Len(t, findings, 1)
			assert.Equal(t, replaycase.ReasonInvalidParameter, findings[0].Code)
		})
	}
}

// reasoningParams is the part of mc this file is about.
func reasoningParams(mc replaycase.ModelConfig) replaycase.ModelConfig {
	return replaycase.ModelConfig{ReasoningEffort: mc.ReasoningEffort, ReasoningSummary: mc.ReasoningSummary, Thinking: mc.Thinking}
}
