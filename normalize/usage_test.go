package normalize

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/replaycase"
)

// usageOf builds a one-span trace with the given attributes and returns the step's usage.
func usageOf(t *testing.T, name string, attrs map[string]any) (replaycase.Usage, []replaycase.Reason) {
	t.Helper()
	td := ptrace.NewTraces()
	sp := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	sp.SetTraceID([16]byte{4})
	sp.SetSpanID([8]byte{4})
	sp.SetName(name)
	require.NoError(t, sp.Attributes().FromRaw(attrs))
	c, findings, genAI := Build(td, plog.NewLogs())
	require.True(t, genAI)
	require.Len(t, c.Steps, 1)
	return c.Steps[0].Usage, findings
}

// Every convention's token fields land in the same five counts; input tokens include cached
// input (the semconv rule) and total is input + output when not recorded.
func TestUsageFromEveryConvention(t *testing.T) {
	for _, tc := range []struct {
		name  string
		span  string
		attrs map[string]any
		want  replaycase.Usage
	}{
		{"semconv, cache_creation (1.40)", "chat", map[string]any{"gen_ai.operation.name": "chat",
			"gen_ai.usage.input_tokens": 1000, "gen_ai.usage.output_tokens": 50, "gen_ai.usage.cache_read.input_tokens": 600,
			"gen_ai.usage.cache_creation.input_tokens": 300, "gen_ai.usage.reasoning.output_tokens": 20},
			replaycase.Usage{InputTokens: 1000, OutputTokens: 50, CacheReadInputTokens: 600, CacheWriteInputTokens: 300, ReasoningOutputTokens: 20, TotalTokens: 1050}},
		{"semconv-genai, cache_write", "chat", map[string]any{"gen_ai.operation.name": "chat",
			"gen_ai.usage.input_tokens": 1000, "gen_ai.usage.output_tokens": 50, "gen_ai.usage.cache_write.input_tokens": 300},
			replaycase.Usage{InputTokens: 1000, OutputTokens: 50, CacheWriteInputTokens: 300, TotalTokens: 1050}},
		{"semconv <= 1.26 names", "chat", map[string]any{"gen_ai.operation.name": "chat",
			"gen_ai.usage.prompt_tokens": 12, "gen_ai.usage.completion_tokens": 3},
			replaycase.Usage{InputTokens: 12, OutputTokens: 3, TotalTokens: 15}},
		{"OpenLLMetry / Strands underscore aliases", "anthropic.chat", map[string]any{"llm.request.type": "chat",
			"gen_ai.usage.input_tokens": 900, "gen_ai.usage.output_tokens": 10, "gen_ai.usage.cache_read_input_tokens": 500,
			"gen_ai.usage.cache_creation_input_tokens": 100, "llm.usage.total_tokens": 910, "llm.usage.reasoning_tokens": 4},
			replaycase.Usage{InputTokens: 900, OutputTokens: 10, CacheReadInputTokens: 500, CacheWriteInputTokens: 100, ReasoningOutputTokens: 4, TotalTokens: 910}},
		{"Strands cache_write underscore", "chat", map[string]any{"gen_ai.operation.name": "chat",
			"gen_ai.usage.input_tokens": 70, "gen_ai.usage.output_tokens": 7, "gen_ai.usage.cache_write_input_tokens": 30},
			replaycase.Usage{InputTokens: 70, OutputTokens: 7, CacheWriteInputTokens: 30, TotalTokens: 77}},
		{"OpenLIT reasoning alias", "chat", map[string]any{"gen_ai.operation.name": "chat",
			"gen_ai.usage.input_tokens": 40, "gen_ai.usage.output_tokens": 200, "gen_ai.usage.reasoning_tokens": 150, "gen_ai.usage.total_tokens": 240},
			replaycase.Usage{InputTokens: 40, OutputTokens: 200, ReasoningOutputTokens: 150, TotalTokens: 240}},
		{"OpenInference", "llm", map[string]any{"openinference.span.kind": "LLM",
			"llm.token_count.prompt": 300, "llm.token_count.completion": 30, "llm.token_count.total": 330,
			"llm.token_count.prompt_details.cache_read": 200, "llm.token_count.prompt_details.cache_write": 50,
			"llm.token_count.completion_details.reasoning": 12},
			replaycase.Usage{InputTokens: 300, OutputTokens: 30, CacheReadInputTokens: 200, CacheWriteInputTokens: 50, ReasoningOutputTokens: 12, TotalTokens: 330}},
		{"Vercel AI SDK v6", "ai.generateText.doGenerate", map[string]any{"ai.operationId": "ai.generateText.doGenerate",
			"ai.usage.inputTokens": 80, "ai.usage.outputTokens": 8, "ai.usage.totalTokens": 88,
			"ai.usage.cachedInputTokens": 64, "ai.usage.reasoningTokens": 2},
			replaycase.Usage{InputTokens: 80, OutputTokens: 8, CacheReadInputTokens: 64, ReasoningOutputTokens: 2, TotalTokens: 88}},
		{"Vercel AI SDK <= v5", "ai.generateText.doGenerate", map[string]any{"ai.operationId": "ai.generateText.doGenerate",
			"ai.usage.promptTokens": 80, "ai.usage.completionTokens": 8},
			replaycase.Usage{InputTokens: 80, OutputTokens: 8, TotalTokens: 88}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, findings := usageOf(t, tc.span, tc.attrs)
			for _, f := range findings {
				assert.NotEqual(t, replaycase.ReasonInvalidUsage, f.Code, f.Detail)
			}
			assert.Equal(t, tc.want, got)
		})
	}
}

// A recorded response body gives the usage when no attribute does, in its own API's terms:
// Anthropic's input_tokens leave out the cached tokens, OpenAI Responses' include them.
func TestUsageFromRecordedResponseBodies(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       replaycase.Usage
		finding    string
	}{
		{"Anthropic Messages", `{"id":"msg_01","type":"message","role":"assistant","model":"claude-sonnet-4","content":[{"type":"text","text":"Hi"}],"stop_reason":"end_turn",
			"usage":{"input_tokens":25,"output_tokens":12,"cache_read_input_tokens":1800,"cache_creation_input_tokens":200}}`,
			replaycase.Usage{InputTokens: 25 + 1800 + 200, OutputTokens: 12, CacheReadInputTokens: 1800, CacheWriteInputTokens: 200, TotalTokens: 2037}, ""},
		{"OpenAI Responses", `{"id":"resp_1","object":"response","model":"o4-mini","output":[],
			"usage":{"input_tokens":2000,"input_tokens_details":{"cached_tokens":1500},"output_tokens":300,"output_tokens_details":{"reasoning_tokens":256},"total_tokens":2300}}`,
			replaycase.Usage{InputTokens: 2000, OutputTokens: 300, CacheReadInputTokens: 1500, ReasoningOutputTokens: 256, TotalTokens: 2300}, ""},
		{"Anthropic count that is no number", `{"type":"message","usage":{"input_tokens":"many","output_tokens":3}}`,
			replaycase.Usage{OutputTokens: 3, TotalTokens: 3}, `output.value usage input_tokens is many, not a number`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, findings, _ := plant(t, testfixtures.OpenInference, "OpenAI Chat Completions", func(sp ptrace.Span) {
				a := sp.Attributes()
				for _, k := range []string{"llm.token_count.prompt", "llm.token_count.completion", "llm.token_count.total"} {
					a.Remove(k)
				}
				a.PutStr("output.value", tc.body)
				a.PutStr("output.mime_type", "application/json")
			})
			var usageFindings []string
			for _, f := range findings {
				if f.Code == replaycase.ReasonInvalidUsage {
					usageFindings = append(usageFindings, f.Detail)
				}
			}
			if tc.finding == "" {
				assert.Empty(t, usageFindings)
			} else {
				assert.Equal(t, []string{tc.finding}, usageFindings)
			}
			var st *replaycase.Step
			for i := range c.Steps {
				if c.Steps[i].Kind == replaycase.StepLLM {
					st = &c.Steps[i]
					break
				}
			}
			require.NotNil(t, st)
			assert.Equal(t, tc.want, st.Usage)
		})
	}
}
