package normalize

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/replaycase"
)

// The output format and the sampling parameters beyond temperature and top_p (top_k, the
// penalties, the choice count) are read from every convention that records them: a recording
// made for JSON output is another model call than one made for text.
func TestOutputFormatAndSamplingParametersAreRead(t *testing.T) {
	k, n, freq, pres := int64(40), int64(2), 0.5, -0.25
	for _, tc := range []struct {
		name, run, span string
		change          func(a pcommon.Map)
		want            replaycase.ModelConfig // the fields below only
	}{
		{
			name: "GenAI semconv", run: testfixtures.Traceloop, span: "chat gpt-4o-mini",
			change: func(a pcommon.Map) {
				a.PutInt("gen_ai.request.top_k", 40)
				a.PutDouble("gen_ai.request.frequency_penalty", 0.5)
				a.PutDouble("gen_ai.request.presence_penalty", -0.25)
				a.PutInt("gen_ai.request.choice.count", 2)
				a.PutStr("gen_ai.output.type", "json")
			},
			want: replaycase.ModelConfig{TopK: &k, FrequencyPenalty: &freq, PresencePenalty: &pres, ChoiceCount: &n, OutputType: "json"},
		},
		{
			name: "GenAI semconv before 1.31 (gen_ai.openai.request.response_format)", run: testfixtures.Traceloop, span: "chat gpt-4o-mini",
			change: func(a pcommon.Map) { a.PutStr("gen_ai.openai.request.response_format", "json_schema") },
			want:   replaycase.ModelConfig{OutputType: "json"},
		},
		{
			name: "OpenLLMetry legacy llm.*", run: testfixtures.Traceloop, span: "chat gpt-4o-mini",
			change: func(a pcommon.Map) {
				a.PutStr("llm.top_k", "40")
				a.PutDouble("llm.frequency_penalty", 0.5)
				a.PutDouble("llm.presence_penalty", -0.25)
			},
			want: replaycase.ModelConfig{TopK: &k, FrequencyPenalty: &freq, PresencePenalty: &pres},
		},
		{
			name: "OpenInference llm.invocation_parameters", run: testfixtures.OpenInference, span: "OpenAI Chat Completions",
			change: func(a pcommon.Map) {
				a.PutStr("llm.invocation_parameters", `{"model":"gpt-4o-mini","n":2,"top_k":40,"frequency_penalty":0.5,"presence_penalty":-0.25,`+
					`"response_format":{"type":"json_schema","json_schema":{"name":"weather","schema":{"type":"object"}}}}`)
			},
			want: replaycase.ModelConfig{TopK: &k, FrequencyPenalty: &freq, PresencePenalty: &pres, ChoiceCount: &n, OutputType: "json",
				ResponseFormat: `{"json_schema":{"name":"weather","schema":{"type":"object"}},"type":"json_schema"}`},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, findings, spanID := plant(t, tc.run, tc.span, func(sp ptrace.Span) { tc.change(sp.Attributes()) })
			require.Empty(t, findings)
			assert.Equal(t, tc.want, outputParams(stepOf(t, c, spanID).ModelConfig))
		})
	}

	t.Run("Vercel AI SDK ai.settings.*", func(t *testing.T) {
		c, findings, _ := Build(attributeSpan(t, "ai.generateText.doGenerate", map[string]any{
			"ai.operationId": "ai.generateText.doGenerate", "ai.model.provider": "openai.chat", "ai.model.id": "gpt-4o-mini",
			"ai.prompt.messages": `[{"role":"user","content":[{"type":"text","text":"Paris?"}]}]`,
			"ai.response.text":   "14C", "ai.response.finishReason": "stop",
			"ai.settings.topK": int64(40), "ai.settings.frequencyPenalty": 0.5, "ai.settings.presencePenalty": -0.25,
		}, 1), plog.NewLogs())
		require.Empty(t, findings)
		assert.Equal(t, replaycase.ModelConfig{TopK: &k, FrequencyPenalty: &freq, PresencePenalty: &pres}, outputParams(c.Steps[0].ModelConfig))
	})

	// Microsoft Agent Framework records the choice count even when it is 1 (semconv: only if not 1).
	t.Run("Agent Framework reference run", func(t *testing.T) {
		c, _, _ := Build(langfuseTraces(t, "otel-genai_agent-framework-agent-run-tool-call.langfuse-export.json"), plog.NewLogs())
		one, chats := int64(1), 0
		for _, st := range c.Steps {
			if st.Kind == replaycase.StepLLM {
				chats++
				assert.Equal(t, &one, st.ModelConfig.ChoiceCount)
			}
		}
		assert.Equal(t, 2, chats)
	})
}

// outputParams is the part of mc this file is about.
func outputParams(mc replaycase.ModelConfig) replaycase.ModelConfig {
	return replaycase.ModelConfig{TopK: mc.TopK, FrequencyPenalty: mc.FrequencyPenalty, PresencePenalty: mc.PresencePenalty,
		ChoiceCount: mc.ChoiceCount, OutputType: mc.OutputType, ResponseFormat: mc.ResponseFormat}
}

// A value no API accepts is reported and left out, as for temperature and top_p; so is a
// recorded response_format that is no format object, which would otherwise vanish and let a
// request for text match a recording made for JSON.
func TestOutputFormatAndSamplingParametersAreChecked(t *testing.T) {
	for _, tc := range []struct {
		name, run, span string
		change          func(a pcommon.Map)
		detail          string
		check           func(t *testing.T, mc replaycase.ModelConfig)
	}{
		{
			name: "frequency_penalty above 2", run: testfixtures.Traceloop, span: "chat gpt-4o-mini",
			change: func(a pcommon.Map) { a.PutDouble("gen_ai.request.frequency_penalty", 3) },
			detail: "frequency_penalty is 3, outside -2…2",
			check:  func(t *testing.T, mc replaycase.ModelConfig) { assert.Nil(t, mc.FrequencyPenalty) },
		},
		{
			name: "presence_penalty NaN", run: testfixtures.Traceloop, span: "chat gpt-4o-mini",
			change: func(a pcommon.Map) { a.PutStr("gen_ai.request.presence_penalty", "NaN") },
			detail: "presence_penalty is NaN, outside -2…2",
			check:  func(t *testing.T, mc replaycase.ModelConfig) { assert.Nil(t, mc.PresencePenalty) },
		},
		{
			name: "choice count 0", run: testfixtures.Traceloop, span: "chat gpt-4o-mini",
			change: func(a pcommon.Map) { a.PutInt("gen_ai.request.choice.count", 0) },
			detail: "choice_count is 0; a model call returns at least one choice",
			check:  func(t *testing.T, mc replaycase.ModelConfig) { assert.Nil(t, mc.ChoiceCount) },
		},
		{
			name: "negative top_k", run: testfixtures.Traceloop, span: "chat gpt-4o-mini",
			change: func(a pcommon.Map) { a.PutInt("gen_ai.request.top_k", -5) },
			detail: "top_k is -5, below -1",
			check:  func(t *testing.T, mc replaycase.ModelConfig) { assert.Nil(t, mc.TopK) },
		},
		{
			name: "top_k as text", run: testfixtures.Traceloop, span: "chat gpt-4o-mini",
			change: func(a pcommon.Map) { a.PutStr("gen_ai.request.top_k", "many") },
			detail: `gen_ai.request.top_k is "many", not a number`,
			check:  func(t *testing.T, mc replaycase.ModelConfig) { assert.Nil(t, mc.TopK) },
		},
		{
			name: "response_format not an object in a recorded request body", run: testfixtures.OpenInference, span: "OpenAI Chat Completions",
			change: func(a pcommon.Map) {
				a.PutStr("llm.invocation_parameters", `{"model":"gpt-4o-mini","response_format":"<class 'Weather'>"}`)
			},
			detail: `llm.invocation_parameters response_format is <class 'Weather'>, not a format object with a type`,
			check:  func(t *testing.T, mc replaycase.ModelConfig) { assert.Empty(t, mc.ResponseFormat) },
		},
		{
			name: "n as text in a recorded request body", run: testfixtures.OpenInference, span: "OpenAI Chat Completions",
			change: func(a pcommon.Map) { a.PutStr("llm.invocation_parameters", `{"model":"gpt-4o-mini","n":"two"}`) },
			detail: "llm.invocation_parameters n is two, not a number",
			check:  func(t *testing.T, mc replaycase.ModelConfig) { assert.Nil(t, mc.ChoiceCount) },
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, findings, spanID := plant(t, tc.run, tc.span, func(sp ptrace.Span) { tc.change(sp.Attributes()) })
			require.Len(t, findings, 1, "%v", findings)
			assert.Equal(t, replaycase.ReasonInvalidParameter, findings[0].Code)
			assert.Contains(t, findings[0].Detail, tc.detail)
			assert.Equal(t, spanID, findings[0].SpanID)
			tc.check(t, stepOf(t, c, spanID).ModelConfig)
		})
	}
}
