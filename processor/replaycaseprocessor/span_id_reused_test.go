package replaycaseprocessor

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/processor/replaycaseprocessor/internal/metadatatest"
	"github.com/reprise-dev/reprise/replaycase"
)

// A span that reuses the span id of a different span of its trace (a client whose id generator
// repeats) is not a retry: it cannot be held beside the first (steps, parents and events are
// joined by span id), so it is dropped, but counted by reason, logged with its trace and span
// ids, and the case is quarantined for the step it lacks. It used to be counted as a duplicate
// and nothing else, and the case was accepted without the span.
func TestASpanThatReusesASpanIDIsLoggedAndItsCaseQuarantined(t *testing.T) {
	h := newHarness(t, nil)
	logs := h.observeDropLog()

	td := testfixtures.Traces(t, testfixtures.Traceloop)
	// The same trace's first LLM span again, with the id of another span and other times.
	again := ptrace.NewTraces()
	rs := again.ResourceSpans().AppendEmpty()
	td.ResourceSpans().At(0).Resource().CopyTo(rs.Resource())
	ss := rs.ScopeSpans().AppendEmpty()
	llm := td.ResourceSpans().At(0).ScopeSpans().At(1).Spans().At(0)
	other := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
	sp := ss.Spans().AppendEmpty()
	llm.CopyTo(sp)
	sp.SetSpanID(other.SpanID())
	sp.SetStartTimestamp(llm.StartTimestamp() + pcommon.Timestamp(time.Second))
	sp.SetEndTimestamp(llm.EndTimestamp() + pcommon.Timestamp(time.Second))
	traceID, spanID := llm.TraceID().String(), other.SpanID().String()
	h.sendTraces(td) // the processor takes what it is sent
	h.sendTraces(again)
	h.advance(3 * time.Second)

	cases := h.cases()
	require.Len(t, cases, 1)
	c := cases[0]
	assert.Equal(t, replaycase.StatusQuarantined, c.Status)
	require.True(t, c.HasReason(replaycase.ReasonSpanIDReused), "reasons: %v", c.Reasons)
	entries := logs.FilterMessageSnippet("reuses the span id").All()
	require.Len(t, entries, 1)
	fields := entries[0].ContextMap()
	assert.Equal(t, traceID, fields["trace_id"])
	assert.Equal(t, spanID, fields["span_id"])
	metadatatest.AssertEqualProcessorReplayCaseDroppedSpans(t, h.tel, []metricdata.DataPoint[int64]{
		{Value: 1, Attributes: attribute.NewSet(attribute.String("reason", "span_id_reused"))},
	}, metricdatatest.IgnoreTimestamp())
	h.shutdown()
}

// A retry of the same spans is still a duplicate: counted, not logged, the case accepted.
func TestARetriedSpanIsNotTakenForAReusedSpanID(t *testing.T) {
	h := newHarness(t, nil)
	logs := h.observeDropLog()
	h.sendTraces(testfixtures.Traces(t, testfixtures.Traceloop))
	h.sendTraces(testfixtures.Traces(t, testfixtures.Traceloop))
	h.advance(3 * time.Second)
	cases := h.cases()
	require.Len(t, cases, 1)
	assert.Equal(t, replaycase.StatusAccepted, cases[0].Status, "reasons: %v", cases[0].Reasons)
	assert.Empty(t, logs.FilterMessageSnippet("reuses the span id").All())
	h.shutdown()
}
