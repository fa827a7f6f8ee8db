package replaycaseprocessor

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/processor/replaycaseprocessor/internal/metadatatest"
	"github.com/reprise-dev/reprise/replaycase"
)

// A GenAI span sent without a span id (here an LLM call) is the client's malformed input: its
// run is a quarantined case with a reason naming the span, every step kept (the one without an
// id under a substitute) and the original spans kept as raw spans. It used to make Encode fail
// and the whole run was dropped as encode_error, so the run was in no dataset.
func TestAGenAISpanWithoutASpanIDIsQuarantinedNotDropped(t *testing.T) {
	h := newHarness(t, nil)
	logs := h.observeDropLog()

	bad := testfixtures.Traces(t, testfixtures.Traceloop)
	testfixtures.WithTraceID(bad, plog.NewLogs(), 1)
	bad.ResourceSpans().At(0).ScopeSpans().At(1).Spans().At(0).SetSpanID(pcommon.SpanID{}) // an LLM call
	good := testfixtures.Traces(t, testfixtures.Traceloop)
	testfixtures.WithTraceID(good, plog.NewLogs(), 2)
	badID := bad.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).TraceID()
	goodID := good.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).TraceID()
	h.sendTraces(bad)
	h.sendTraces(good)
	h.advance(3 * time.Second) // both close in one sweep: one batch

	byTrace := map[string]*replaycase.Case{}
	for _, c := range h.cases() {
		byTrace[c.Provenance.TraceID] = c
	}
	require.Len(t, byTrace, 2, "every run is a case")
	ok, q := byTrace[goodID.String()], byTrace[badID.String()]
	require.NotNil(t, ok)
	require.NotNil(t, q)
	assert.Equal(t, replaycase.StatusAccepted, ok.Status, "reasons: %v", ok.Reasons)
	assert.Equal(t, replaycase.StatusQuarantined, q.Status)
	require.True(t, q.HasReason(replaycase.ReasonInvalidSpanID), "reasons: %v", q.Reasons)
	for _, r := range q.Reasons {
		if r.Code == replaycase.ReasonInvalidSpanID {
			assert.Contains(t, r.Detail, "span id")
		}
	}
	require.Len(t, q.Steps, len(ok.Steps), "no step is left out")
	for _, st := range q.Steps {
		assert.True(t, validSpanID(st.SpanID), "step %d has span id %q", st.Index, st.SpanID)
	}
	assert.NotEmpty(t, q.RawSpans, "the original spans are kept for a re-drive")

	metadatatest.AssertEqualProcessorReplayCaseCasesClosed(t, h.tel, []metricdata.DataPoint[int64]{
		{Value: 1, Attributes: attribute.NewSet(attribute.String("closed_by", string(replaycase.ClosedRootEnded)), attribute.String("status", string(replaycase.StatusAccepted)))},
		{Value: 1, Attributes: attribute.NewSet(attribute.String("closed_by", string(replaycase.ClosedRootEnded)), attribute.String("status", string(replaycase.StatusQuarantined)))},
	}, metricdatatest.IgnoreTimestamp())
	assert.Empty(t, logs.FilterMessage("replay case dropped").All())
	h.shutdown()
}

// The root agent span sent without a span id is no less malformed: the run is quarantined, not
// accepted with an empty root_span_id.
func TestARootSpanWithoutASpanIDIsQuarantined(t *testing.T) {
	h := newHarness(t, nil)
	td := testfixtures.Traces(t, testfixtures.Traceloop)
	var root ptrace.Span
	for i := 0; i < td.ResourceSpans().Len(); i++ {
		for j := 0; j < td.ResourceSpans().At(i).ScopeSpans().Len(); j++ {
			spans := td.ResourceSpans().At(i).ScopeSpans().At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				if spans.At(k).ParentSpanID().IsEmpty() {
					root = spans.At(k)
				}
			}
		}
	}
	require.NotEqual(t, ptrace.Span{}, root)
	root.SetSpanID(pcommon.SpanID{})
	h.sendTraces(td)
	h.advance(3 * time.Second)
	cases := h.cases()
	require.Len(t, cases, 1)
	assert.Equal(t, replaycase.StatusQuarantined, cases[0].Status)
	assert.True(t, cases[0].HasReason(replaycase.ReasonInvalidSpanID), "reasons: %v", cases[0].Reasons)
	h.shutdown()
}

// The other malformed ids do not reach an encode_error drop either: spans with an all-zero trace
// id (one of them also without a span id) are one quarantined case, and a span id sent twice in
// one run is a duplicate, counted, with the run still one case.
func TestOtherMalformedIDsAreNoDrop(t *testing.T) {
	h := newHarness(t, nil)
	logs := h.observeDropLog()

	zero := testfixtures.Traces(t, testfixtures.Traceloop)
	forEachScopeSpans(zero, func(ss ptrace.ScopeSpans) {
		for k := 0; k < ss.Spans().Len(); k++ {
			ss.Spans().At(k).SetTraceID(pcommon.TraceID{})
		}
	})
	zero.ResourceSpans().At(0).ScopeSpans().At(1).Spans().At(0).SetSpanID(pcommon.SpanID{})
	h.sendTraces(zero)

	twice := testfixtures.Traces(t, testfixtures.Traceloop)
	testfixtures.WithTraceID(twice, plog.NewLogs(), 3)
	spans := twice.ResourceSpans().At(0).ScopeSpans().At(1).Spans()
	spans.At(0).CopyTo(spans.AppendEmpty()) // the same span id again, in the same request
	h.sendTraces(twice)
	h.advance(3 * time.Second)

	cases := h.cases()
	require.Len(t, cases, 2)
	for _, c := range cases {
		if c.Provenance.TraceID == "" { // an all-zero trace id is written empty
			assert.Equal(t, replaycase.StatusQuarantined, c.Status)
			assert.True(t, c.HasReason(replaycase.ReasonInvalidTraceID))
			assert.True(t, c.HasReason(replaycase.ReasonInvalidSpanID), "one of its spans has no span id either")
			for _, st := range c.Steps {
				assert.True(t, validSpanID(st.SpanID), "step %d has span id %q", st.Index, st.SpanID)
			}
		} else {
			assert.Equal(t, replaycase.StatusAccepted, c.Status, "%v", c.Reasons)
		}
	}
	assert.Empty(t, logs.FilterMessage("replay case dropped").All())
	h.shutdown()
}
