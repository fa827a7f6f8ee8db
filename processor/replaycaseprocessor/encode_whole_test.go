package replaycaseprocessor

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/reprise-dev/reprise/internal/pdatawalk"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/processor/replaycaseprocessor/internal/metadatatest"
	"github.com/reprise-dev/reprise/replaycase"
)

// A case that cannot be encoded (here: a GenAI span sent without a span id, so its step has
// none) is dropped, counted and logged, and nothing of it reaches the next consumer: Encode
// had written the case span and the steps before the bad one into the batch, and the exporter
// wrote that part as a row while the metrics said the case was dropped.
func TestACaseThatCannotBeEncodedLeavesNothingInTheBatch(t *testing.T) {
	h := newHarness(t, nil)
	core, logs := observer.New(zap.WarnLevel)
	h.p.dropLog = zap.New(core)

	bad := testfixtures.Traces(t, testfixtures.Traceloop)
	testfixtures.WithTraceID(bad, plog.NewLogs(), 1)
	bad.ResourceSpans().At(0).ScopeSpans().At(1).Spans().At(0).SetSpanID(pcommon.SpanID{}) // an LLM call
	good := testfixtures.Traces(t, testfixtures.Traceloop)
	testfixtures.WithTraceID(good, plog.NewLogs(), 2)
	goodID := good.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).TraceID()
	h.sendTraces(bad)
	h.sendTraces(good)
	h.advance(3 * time.Second) // both close in one sweep: one batch

	emitted := 0
	for _, td := range h.sink.AllTraces() {
		for r := range pdatawalk.Spans(td) {
			emitted++
			assert.Equal(t, goodID, r.Span.TraceID(), "a span of the case that was dropped was sent: %q", r.Span.Name())
		}
	}
	assert.Positive(t, emitted)
	cases := h.cases()
	require.Len(t, cases, 1)
	assert.Equal(t, goodID.String(), cases[0].Provenance.TraceID)

	metadatatest.AssertEqualProcessorReplayCaseDroppedCases(t, h.tel, []metricdata.DataPoint[int64]{
		{Value: 1, Attributes: attribute.NewSet(attribute.String("reason", "encode_error"))},
	}, metricdatatest.IgnoreTimestamp())
	dropped := logs.FilterMessage("replay case dropped").All()
	require.Len(t, dropped, 1)
	assert.NotEmpty(t, dropped[0].ContextMap()["case_id"])
	metadatatest.AssertEqualProcessorReplayCaseCasesClosed(t, h.tel, []metricdata.DataPoint[int64]{
		{Value: 1, Attributes: attribute.NewSet(attribute.String("closed_by", string(replaycase.ClosedRootEnded)), attribute.String("status", string(replaycase.StatusAccepted)))},
	}, metricdatatest.IgnoreTimestamp())
	h.shutdown()
}
