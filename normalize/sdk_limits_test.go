package normalize

import (
	"strings"
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

// An SDK drops the attributes and events of a span past its limits (OTEL_ATTRIBUTE_COUNT_LIMIT
// and OTEL_SPAN_EVENT_COUNT_LIMIT, 128 by default; a flattened conversation of some sixty
// messages passes it) and says only how many it dropped. What it dropped can be a message or a
// token count: the step must be flagged, not replayed as what the run did.
func TestContentDroppedAtSDKLimitsIsFlagged(t *testing.T) {
	t.Run("span attributes", func(t *testing.T) {
		c, findings, spanID := plant(t, testfixtures.OpenInference, "OpenAI Chat Completions", func(sp ptrace.Span) {
			// The JS SDK keeps the first attributes and drops those set past the limit.
			a := sp.Attributes()
			for _, k := range []string{"llm.finish_reason", "llm.token_count.completion", "llm.token_count.prompt", "llm.token_count.total"} {
				require.True(t, a.Remove(k), k)
			}
			sp.SetDroppedAttributesCount(4)
		})
		got := reasonsOf(findings, replaycase.ReasonTruncatedContent)
		require.Len(t, got, 1, "%v", findings)
		assert.Equal(t, spanID, got[0].SpanID)
		assert.Contains(t, got[0].Detail, "dropped 4 attributes")
		assert.NotEmpty(t, stepOf(t, c, spanID).OutputMessages, "what was recorded is still read")
	})
	t.Run("span events", func(t *testing.T) {
		_, findings, spanID := plant(t, testfixtures.Traceloop, "chat gpt-4o-mini", func(sp ptrace.Span) {
			sp.SetDroppedEventsCount(2)
		})
		got := reasonsOf(findings, replaycase.ReasonTruncatedContent)
		require.Len(t, got, 1, "%v", findings)
		assert.Equal(t, spanID, got[0].SpanID)
		assert.Contains(t, got[0].Detail, "dropped 2 events")
	})
	t.Run("log event attributes", func(t *testing.T) {
		td, ld := testfixtures.Traces(t, testfixtures.OTelEvents), testfixtures.Logs(t, testfixtures.OTelEvents)
		var spanID string
		for l := range pdatawalk.LogRecords(ld) {
			if spanID == "" {
				spanID = l.Record.SpanID().String()
				l.Record.SetDroppedAttributesCount(1)
			}
		}
		_, findings, _ := Build(td, ld)
		got := reasonsOf(findings, replaycase.ReasonTruncatedContent)
		require.Len(t, got, 1, "%v", findings)
		assert.Equal(t, spanID, got[0].SpanID)
		assert.Contains(t, got[0].Detail, "dropped 1 attributes")
	})
	t.Run("nothing dropped", func(t *testing.T) {
		for _, run := range []string{testfixtures.OpenInference, testfixtures.Traceloop, testfixtures.OTelEvents} {
			_, findings, _ := Build(testfixtures.Traces(t, run), testfixtures.Logs(t, run))
			for _, f := range findings {
				assert.NotEqual(t, replaycase.ReasonTruncatedContent, f.Code, "%s: %v", run, f)
			}
		}
	})
}

// A flattened list with an item missing before its last one (llm.input_messages.0 and .2
// without .1: an attribute limit, or a processor that deleted keys) would give a conversation
// without one of its messages, replayed as if complete.
func TestIndexedListWithGapIsFlagged(t *testing.T) {
	build := func(t *testing.T, run, spanID string, change func(a pcommon.Map)) (*replaycase.Case, []replaycase.Reason) {
		t.Helper()
		td := testfixtures.Traces(t, run)
		found := false
		for s := range pdatawalk.Spans(td) {
			if s.Span.SpanID().String() == spanID {
				change(s.Span.Attributes())
				found = true
			}
		}
		require.True(t, found, "no span %s in %s", spanID, run)
		c, findings, _ := Build(td, testfixtures.Logs(t, run))
		return c, findings
	}
	t.Run("openinference", func(t *testing.T) {
		const second = "1af36c236d4ae6bc" // four input messages
		c, findings := build(t, testfixtures.OpenInference, second, func(a pcommon.Map) {
			a.RemoveIf(func(k string, _ pcommon.Value) bool { return strings.HasPrefix(k, "llm.input_messages.1.") })
		})
		got := reasonsOf(findings, replaycase.ReasonTruncatedContent)
		require.Len(t, got, 1, "%v", findings)
		assert.Equal(t, second, got[0].SpanID)
		assert.Contains(t, got[0].Detail, "llm.input_messages.1")
		assert.Len(t, stepOf(t, c, second).InputMessages, 3, "the messages recorded are still read")
	})
	t.Run("openllmetry", func(t *testing.T) {
		const first = "566e5ad8abdf36b9"
		_, findings := build(t, testfixtures.Traceloop, first, func(a pcommon.Map) {
			a.Remove("gen_ai.input.messages")
			a.PutStr("gen_ai.prompt.0.role", "system")
			a.PutStr("gen_ai.prompt.0.content", "You are a weather assistant.")
			a.PutStr("gen_ai.prompt.2.role", "user")
			a.PutStr("gen_ai.prompt.2.content", "And tomorrow?")
		})
		got := reasonsOf(findings, replaycase.ReasonTruncatedContent)
		require.Len(t, got, 1, "%v", findings)
		assert.Equal(t, first, got[0].SpanID)
		assert.Contains(t, got[0].Detail, "gen_ai.prompt.1")
	})
	t.Run("openinference tools", func(t *testing.T) {
		const first = "aff183b67e09aaf1"
		_, findings := build(t, testfixtures.OpenInference, first, func(a pcommon.Map) {
			v, _ := a.Get("llm.tools.0.tool.json_schema")
			a.PutStr("llm.tools.2.tool.json_schema", v.Str())
		})
		got := reasonsOf(findings, replaycase.ReasonTruncatedContent)
		require.Len(t, got, 1, "%v", findings)
		assert.Equal(t, first, got[0].SpanID)
		assert.Contains(t, got[0].Detail, "llm.tools.1")
	})
	t.Run("openinference embeddings", func(t *testing.T) {
		c, findings, _ := Build(attributeSpan(t, "OpenAI Embeddings", map[string]any{
			"openinference.span.kind": "EMBEDDING", "embedding.model_name": "text-embedding-3-small", "llm.system": "openai",
			"embedding.embeddings.0.embedding.text": "alpha", "embedding.embeddings.0.embedding.vector": []any{0.25},
			"embedding.embeddings.2.embedding.text": "gamma", "embedding.embeddings.2.embedding.vector": []any{0.5},
		}, 2), plog.NewLogs())
		require.Len(t, c.Steps, 1)
		got := reasonsOf(findings, replaycase.ReasonTruncatedContent)
		require.Len(t, got, 1, "%v", findings)
		assert.Equal(t, c.Steps[0].SpanID, got[0].SpanID)
		assert.Contains(t, got[0].Detail, "embedding.embeddings.1")
	})
}
