package normalize

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/internal/pdatawalk"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/replaycase"
)

// spanNamed calls change on every span of td called name.
func spanNamed(t *testing.T, td ptrace.Traces, name string, change func(a ptrace.Span)) {
	t.Helper()
	n := 0
	for s := range pdatawalk.Spans(td) {
		if s.Span.Name() == name {
			change(s.Span)
			n++
		}
	}
	require.NotZero(t, n, "no span %q", name)
}

// The AI SDK 6 records an Anthropic call's cache writes as ai.usage.inputTokenDetails.cacheWriteTokens
// (its ai.usage.inputTokens is the total, cache included, as the recorded run shows with
// noCacheTokens). They are part of the input and cost more than plain input: they must be
// counted as cache writes, not priced as plain input.
func TestVercelAnthropicCacheWriteTokens(t *testing.T) {
	td, ld := recordedRun(t, "node", "vercel-anthropic-generate")
	first := ""
	spanNamed(t, td, "ai.generateText.doGenerate", func(sp ptrace.Span) {
		if first != "" {
			return
		}
		first = sp.SpanID().String()
		a := sp.Attributes()
		// What convertAnthropicMessagesUsage gives for input_tokens 41, cache read 1000,
		// cache creation 200.
		a.PutInt("ai.usage.inputTokens", 1241)
		a.PutInt("ai.usage.inputTokenDetails.noCacheTokens", 41)
		a.PutInt("ai.usage.inputTokenDetails.cacheReadTokens", 1000)
		a.PutInt("ai.usage.inputTokenDetails.cacheWriteTokens", 200)
		a.PutInt("ai.usage.cachedInputTokens", 1000)
		a.PutInt("ai.usage.totalTokens", 1256)
		a.PutInt("gen_ai.usage.input_tokens", 1241)
	})
	c, _, _ := Build(td, ld)
	require.Equal(t, replaycase.Usage{InputTokens: 1241, OutputTokens: 15, CacheReadInputTokens: 1000, CacheWriteInputTokens: 200, TotalTokens: 1256},
		stepOf(t, c, first).Usage)
}

// OpenInference's JS Anthropic instrumentation (0.2.8) writes llm.token_count.prompt from the
// response's usage.input_tokens, which in Anthropic's terms leaves the cached tokens out, and
// writes no prompt_details. The response body it records in output.value has the cache counts:
// the step's input must include them (the OTel rule the case follows) and name them, or the
// cached part of the prompt is neither counted nor priced.
func TestOpenInferenceAnthropicPromptLeavesOutCache(t *testing.T) {
	td, ld := recordedRun(t, "node", "anthropic-openinference-create")
	var id string
	spanNamed(t, td, "Anthropic Messages", func(sp ptrace.Span) {
		a := sp.Attributes()
		if v, _ := a.Get("output.value"); id != "" || v.Str() == "" {
			return
		}
		id = sp.SpanID().String()
		// As the instrumentation records a response with cache use: prompt = usage.input_tokens.
		a.PutStr("output.value", `{"id":"msg_1","type":"message","role":"assistant","model":"claude-haiku-4-5-20251001","content":[{"type":"tool_use","id":"toolu_1_0","name":"get_weather","input":{"city":"Paris"}},{"type":"tool_use","id":"toolu_1_1","name":"get_weather","input":{"city":"Lyon"}}],"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":41,"output_tokens":15,"cache_read_input_tokens":1000,"cache_creation_input_tokens":200}}`)
	})
	// The SDK's own span records the same call the OTel way (input includes the cache).
	spanNamed(t, td, "anthropic.messages.create", func(sp ptrace.Span) {
		if sp.ParentSpanID().String() == id {
			a := sp.Attributes()
			a.PutInt("gen_ai.usage.input_tokens", 1241)
			a.PutInt("gen_ai.usage.cache_read.input_tokens", 1000)
			a.PutInt("gen_ai.usage.cache_write.input_tokens", 200)
		}
	})
	c, findings, _ := Build(td, ld)
	require.Empty(t, findings)
	require.Equal(t, replaycase.Usage{InputTokens: 1241, OutputTokens: 15, CacheReadInputTokens: 1000, CacheWriteInputTokens: 200, TotalTokens: 1256},
		stepOf(t, c, id).Usage)
	require.Equal(t, int64(1241+42), c.Usage.InputTokens, "one model step per call: the SDK's span is the same call, not counted again")
}

// Two parentless spans that start at the same time: which one is the root (and so the case id)
// must not depend on the order the spans arrived in.
func TestRootChoiceIndependentOfArrivalOrder(t *testing.T) {
	build := func(order []int) *replaycase.Case {
		td := ptrace.NewTraces()
		ss := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
		for _, i := range order {
			sp := ss.AppendEmpty()
			sp.SetTraceID([16]byte{9})
			sp.SetSpanID([8]byte{byte(i + 1)})
			sp.SetName("invoke_agent weather-bot")
			sp.SetStartTimestamp(1764460800000000000)
			sp.SetEndTimestamp(1764460801000000000)
			sp.Attributes().PutStr("gen_ai.operation.name", "invoke_agent")
			sp.Attributes().PutStr("gen_ai.agent.name", "weather-bot")
		}
		c, _, _ := Build(td, plog.NewLogs())
		return c
	}
	a, b := build([]int{0, 1}), build([]int{1, 0})
	require.Equal(t, a.CaseID, b.CaseID)
	require.Equal(t, a.Provenance.RootSpanID, b.Provenance.RootSpanID)
}

// A retrieval document's score that is no finite number is reported and left out, never kept as
// NaN (which no JSON can hold, so the case would not decode again) nor dropped in silence.
func TestRetrievalScoreThatIsNoNumber(t *testing.T) {
	c, findings, id := plant(t, testfixtures.OpenInference, "retrieval kb", func(sp ptrace.Span) {
		sp.Attributes().PutDouble("retrieval.documents.0.document.score", math.NaN())
		sp.Attributes().PutStr("retrieval.documents.1.document.score", "high")
	})
	docs := stepOf(t, c, id).Retrieval.Documents
	require.Len(t, docs, 2)
	require.Nil(t, docs[0].Score)
	require.Nil(t, docs[1].Score)
	var details []string
	for _, f := range findings {
		if f.SpanID == id {
			details = append(details, f.Code+": "+f.Detail)
		}
	}
	require.Equal(t, []string{
		"unparseable_content: retrieval.documents.0.document.score is NaN, not a finite number",
		`unparseable_content: retrieval.documents.1.document.score is "high", not a finite number`,
	}, details)
	td := ptrace.NewTraces()
	require.NoError(t, replaycase.Encode(c, td))
	_, err := replaycase.Decode(td)
	require.NoError(t, err)
}

// An evaluation score of ±Inf is no more a score than NaN: reported, left out.
func TestEvaluationScoreInfinite(t *testing.T) {
	e, problem := evaluation(genAIEvent{name: "gen_ai.evaluation.result", body: map[string]any{
		"gen_ai.evaluation.name": "relevance", "gen_ai.evaluation.score.value": "Infinity"}})
	require.Nil(t, e.ScoreValue)
	require.NotNil(t, problem)
}

// Token counts whose sum does not fit in int64 must not wrap into a negative total.
func TestTotalTokensOverflow(t *testing.T) {
	u, findings := usageOf(t, "chat", map[string]any{"gen_ai.operation.name": "chat",
		"gen_ai.usage.input_tokens": int64(math.MaxInt64), "gen_ai.usage.output_tokens": 10})
	require.GreaterOrEqual(t, u.TotalTokens, int64(0))
	var codes []string
	for _, f := range findings {
		codes = append(codes, f.Code)
	}
	require.Contains(t, codes, replaycase.ReasonInvalidUsage)
}

// Token counts past any model call's (a client's, or a corrupt exporter's) are reported and
// left out: two steps of 2^62 input tokens each summed to a negative case usage.
func TestTokenCountsPastAnyCallAreReported(t *testing.T) {
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	for i := range 2 {
		sp := spans.AppendEmpty()
		sp.SetTraceID([16]byte{5})
		sp.SetSpanID([8]byte{5, byte(i + 1)})
		sp.SetName("chat")
		require.NoError(t, sp.Attributes().FromRaw(map[string]any{"gen_ai.operation.name": "chat",
			"gen_ai.usage.input_tokens": int64(1) << 62, "gen_ai.usage.output_tokens": 10}))
	}
	c, findings, genAI := Build(td, plog.NewLogs())
	require.True(t, genAI)
	assert.GreaterOrEqual(t, c.Usage.InputTokens, int64(0))
	assert.GreaterOrEqual(t, c.Usage.TotalTokens, int64(0))
	invalid := 0
	for _, f := range findings {
		if f.Code == replaycase.ReasonInvalidUsage {
			invalid++
		}
	}
	assert.Equal(t, 2, invalid, "each step's count is reported")
}
