package normalize

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/internal/pdatawalk"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/replaycase"
)

// plant builds the case of a recorded run after change has altered the first span named name.
func plant(t *testing.T, run, name string, change func(sp ptrace.Span)) (*replaycase.Case, []replaycase.Reason, string) {
	t.Helper()
	td := testfixtures.Traces(t, run)
	spanID := ""
	for s := range pdatawalk.Spans(td) {
		if s.Span.Name() == name {
			change(s.Span)
			spanID = s.Span.SpanID().String()
			break
		}
	}
	require.NotEmpty(t, spanID, "no span %q in %s", name, run)
	c, findings, genAI := Build(td, testfixtures.Logs(t, run))
	require.True(t, genAI)
	return c, findings, spanID
}

func stepOf(t *testing.T, c *replaycase.Case, spanID string) replaycase.Step {
	t.Helper()
	for _, st := range c.Steps {
		if st.SpanID == spanID {
			return st
		}
	}
	t.Fatalf("no step for span %s", spanID)
	return replaycase.Step{}
}

// Each quietly wrong value of a recorded run gets a reason code naming the attribute and the
// value, and is left out of the case instead of becoming 0 or a parameter the run never had.
func TestQuietlyWrongValuesAreFlagged(t *testing.T) {
	for _, tc := range []struct {
		name, run, span string
		change          func(a pcommon.Map)
		code, detail    string
		check           func(t *testing.T, st replaycase.Step)
	}{
		{
			name: "usage as text", run: testfixtures.Traceloop, span: "chat gpt-4o-mini",
			change: func(a pcommon.Map) { a.PutStr("gen_ai.usage.input_tokens", "abc") },
			code:   replaycase.ReasonInvalidUsage, detail: `gen_ai.usage.input_tokens is "abc", not a number`,
			check: func(t *testing.T, st replaycase.Step) { assert.Zero(t, st.Usage.InputTokens) },
		},
		{
			name: "usage too large for a token count", run: testfixtures.Traceloop, span: "chat gpt-4o-mini",
			change: func(a pcommon.Map) { a.PutDouble("gen_ai.usage.output_tokens", 1e300) },
			code:   replaycase.ReasonInvalidUsage, detail: "gen_ai.usage.output_tokens is 1e+300, not a number",
			check: func(t *testing.T, st replaycase.Step) { assert.Zero(t, st.Usage.OutputTokens) },
		},
		{
			name: "negative usage", run: testfixtures.Traceloop, span: "chat gpt-4o-mini",
			change: func(a pcommon.Map) { a.PutInt("gen_ai.usage.input_tokens", -40) },
			code:   replaycase.ReasonInvalidUsage, detail: "input_tokens is -40, a negative token count",
			check: func(t *testing.T, st replaycase.Step) { assert.Zero(t, st.Usage.InputTokens) },
		},
		{
			name: "negative max_tokens", run: testfixtures.Traceloop, span: "chat gpt-4o-mini",
			change: func(a pcommon.Map) { a.PutInt("gen_ai.request.max_tokens", -5) },
			code:   replaycase.ReasonInvalidParameter, detail: "max_tokens is -5",
			check: func(t *testing.T, st replaycase.Step) { assert.Nil(t, st.ModelConfig.MaxTokens) },
		},
		{
			name: "temperature NaN", run: testfixtures.Traceloop, span: "chat gpt-4o-mini",
			change: func(a pcommon.Map) { a.PutDouble("gen_ai.request.temperature", math.NaN()) },
			code:   replaycase.ReasonInvalidParameter, detail: "temperature is NaN, outside 0…2",
			check: func(t *testing.T, st replaycase.Step) { assert.Nil(t, st.ModelConfig.Temperature) },
		},
		{
			name: "temperature as text", run: testfixtures.Traceloop, span: "chat gpt-4o-mini",
			change: func(a pcommon.Map) { a.PutStr("gen_ai.request.temperature", "warm") },
			code:   replaycase.ReasonInvalidParameter, detail: `gen_ai.request.temperature is "warm", not a number`,
			check: func(t *testing.T, st replaycase.Step) { assert.Nil(t, st.ModelConfig.Temperature) },
		},
		{
			name: "top_p above 1", run: testfixtures.Traceloop, span: "chat gpt-4o-mini",
			change: func(a pcommon.Map) { a.PutDouble("gen_ai.request.top_p", 1.5) },
			code:   replaycase.ReasonInvalidParameter, detail: "top_p is 1.5, outside 0…1",
			check: func(t *testing.T, st replaycase.Step) { assert.Nil(t, st.ModelConfig.TopP) },
		},
		{
			name: "negative max_tokens in a recorded request body", run: testfixtures.OpenInference, span: "OpenAI Chat Completions",
			change: func(a pcommon.Map) { a.PutStr("llm.invocation_parameters", `{"model":"gpt-4o-mini","max_tokens":-5}`) },
			code:   replaycase.ReasonInvalidParameter, detail: "max_tokens is -5",
			check: func(t *testing.T, st replaycase.Step) { assert.Nil(t, st.ModelConfig.MaxTokens) },
		},
		{
			name: "max_tokens as text in a recorded request body", run: testfixtures.OpenInference, span: "OpenAI Chat Completions",
			change: func(a pcommon.Map) {
				a.PutStr("llm.invocation_parameters", `{"model":"gpt-4o-mini","max_tokens":"lots"}`)
			},
			code: replaycase.ReasonInvalidParameter, detail: "llm.invocation_parameters max_tokens is lots, not a number",
			check: func(t *testing.T, st replaycase.Step) {
				require.NotNil(t, st.ModelConfig.MaxTokens, "the request body in input.value still says 256")
				assert.Equal(t, int64(256), *st.ModelConfig.MaxTokens)
			},
		},
		{
			name: "usage as text in a recorded Chat Completions response", run: testfixtures.OpenInference, span: "OpenAI Chat Completions",
			change: func(a pcommon.Map) {
				for _, k := range []string{"llm.token_count.prompt", "llm.token_count.completion", "llm.token_count.total"} {
					a.Remove(k)
				}
				a.PutStr("output.value", `{"id":"chatcmpl-1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"It is mild."},"finish_reason":"stop"}],"usage":{"prompt_tokens":"abc","completion_tokens":5}}`)
				a.PutStr("output.mime_type", "application/json")
			},
			code: replaycase.ReasonInvalidUsage, detail: "output.value usage prompt_tokens is abc, not a number",
			check: func(t *testing.T, st replaycase.Step) {
				assert.Zero(t, st.Usage.InputTokens)
				assert.Equal(t, int64(5), st.Usage.OutputTokens)
			},
		},
		{
			name: "OpenInference token count as text", run: testfixtures.OpenInference, span: "OpenAI Chat Completions",
			change: func(a pcommon.Map) { a.PutStr("llm.token_count.prompt", "abc") },
			code:   replaycase.ReasonInvalidUsage, detail: `llm.token_count.prompt is "abc", not a number`,
			check: func(t *testing.T, st replaycase.Step) { assert.Zero(t, st.Usage.InputTokens) },
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, findings, spanID := plant(t, tc.run, tc.span, func(sp ptrace.Span) { tc.change(sp.Attributes()) })
			require.Len(t, findings, 1, "%v", findings)
			assert.Equal(t, tc.code, findings[0].Code)
			assert.Contains(t, findings[0].Detail, tc.detail)
			assert.Equal(t, spanID, findings[0].SpanID)
			tc.check(t, stepOf(t, c, spanID))
		})
	}
}

// A timestamp near the top of uint64 must not wrap to 1969; it is reported and left unset.
func TestTimestampPastInt64IsFlagged(t *testing.T) {
	c, findings, spanID := plant(t, testfixtures.Traceloop, "chat gpt-4o-mini", func(sp ptrace.Span) {
		sp.SetEndTimestamp(pcommon.Timestamp(math.MaxUint64 - 5))
	})
	require.Len(t, findings, 1, "%v", findings)
	assert.Equal(t, replaycase.Reason{Code: replaycase.ReasonInvalidTimestamp, SpanID: spanID,
		Detail: "end time 18446744073709551610 ns is past year 2262 and cannot be represented"}, findings[0])
	st := stepOf(t, c, spanID)
	assert.True(t, st.EndTime.IsZero(), "end time %s", st.EndTime)
	assert.Greater(t, st.StartTime.Year(), 2000)
	assert.Greater(t, c.EndTime.Year(), 2000, "the case keeps the root's end")
}

// A root span that ends before it starts is reported, whether or not the root is a GenAI step.
func TestRootEndingBeforeItStartsIsFlagged(t *testing.T) {
	t.Run("agent root", func(t *testing.T) {
		_, findings, spanID := plant(t, testfixtures.Traceloop, "invoke_agent weather-bot", func(sp ptrace.Span) {
			sp.SetEndTimestamp(sp.StartTimestamp() - 1_000_000_000)
		})
		require.Len(t, findings, 1, "%v", findings)
		assert.Equal(t, replaycase.Reason{Code: replaycase.ReasonEndBeforeStart, Detail: "ends 1s before it starts", SpanID: spanID}, findings[0])
	})
	t.Run("HTTP root", func(t *testing.T) {
		td := ptrace.NewTraces()
		spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
		root := spans.AppendEmpty()
		root.SetTraceID([16]byte{9})
		root.SetSpanID([8]byte{1})
		root.SetName("POST /ask")
		root.SetStartTimestamp(2_000_000_000_000_000_000)
		root.SetEndTimestamp(1_999_999_999_000_000_000)
		chat := spans.AppendEmpty()
		chat.SetTraceID([16]byte{9})
		chat.SetSpanID([8]byte{2})
		chat.SetParentSpanID([8]byte{1})
		chat.SetStartTimestamp(2_000_000_000_000_000_000)
		chat.SetEndTimestamp(2_000_000_001_000_000_000)
		chat.Attributes().PutStr("gen_ai.operation.name", "chat")
		c, findings, genAI := Build(td, plog.NewLogs())
		require.True(t, genAI)
		var got []replaycase.Reason
		for _, f := range findings {
			if f.Code == replaycase.ReasonEndBeforeStart {
				got = append(got, f)
			}
		}
		assert.Equal(t, []replaycase.Reason{{Code: replaycase.ReasonEndBeforeStart, Detail: "root span ends 1s before it starts", SpanID: "0100000000000000"}}, got)
		assert.Equal(t, "0100000000000000", c.Provenance.RootSpanID)
	})
}
