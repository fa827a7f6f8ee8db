package replaycaseprocessor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/client"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/processor/replaycaseprocessor/internal/metadatatest"
	"github.com/reprise-dev/reprise/replaycase"
)

// fromPartition is the context the kafka receiver (contrib v0.165.1, contextWithMetadata) gives
// the pipeline for one record.
func fromPartition(partition string) context.Context {
	return client.NewContext(context.Background(), client.Info{Metadata: client.NewMetadata(map[string][]string{
		"kafka.topic": {"reprise_spans"}, "kafka.partition": {partition}, "kafka.offset": {"42"},
	})})
}

func (h *harness) consumeTraces(ctx context.Context, td ptrace.Traces) {
	h.t.Helper()
	require.NoError(h.t, h.traces.ConsumeTraces(ctx, td))
}

func (h *harness) consumeLogs(ctx context.Context, ld plog.Logs) {
	h.t.Helper()
	require.NoError(h.t, h.logs.ConsumeLogs(ctx, ld))
}

// splitAtRoot cuts a recorded run the way a rebalance cuts it: children end (and are exported)
// before their parent, so the part consumed before the move holds the model calls and the part
// consumed after it holds the root span.
func splitAtRoot(t *testing.T, fixture string) (before, after ptrace.Traces) {
	before, after = testfixtures.Traces(t, fixture), testfixtures.Traces(t, fixture)
	withoutRoot(before)
	for _, ss := range after.ResourceSpans().At(0).ScopeSpans().All() {
		ss.Spans().RemoveIf(func(sp ptrace.Span) bool { return !sp.ParentSpanID().IsEmpty() })
	}
	after.ResourceSpans().At(0).ScopeSpans().RemoveIf(func(ss ptrace.ScopeSpans) bool { return ss.Spans().Len() == 0 })
	require.Equal(t, 1, after.SpanCount())
	return before, after
}

func assertSplitCount(t *testing.T, h *harness, evidence string, n int64) {
	t.Helper()
	metadatatest.AssertEqualProcessorReplayCaseSplitTraces(t, h.tel, []metricdata.DataPoint[int64]{
		{Value: n, Attributes: attribute.NewSet(attribute.String("evidence", evidence))},
	}, metricdatatest.IgnoreTimestamp())
}

func assertNoSplit(t *testing.T, h *harness) {
	t.Helper()
	_, err := h.tel.GetMetric("otelcol_processor_replay_case_split_traces")
	assert.Error(t, err, "no split was counted")
}

// A partition moves from collector a to collector b in the middle of a run: a consumed the model
// calls, b the root span. a's part is quarantined with reason trace_split, counted and logged
// with the trace id; b's part is the row with the root; both have the trace id, so they can be
// merged.
func TestTraceSplitAcrossARebalanceIsQuarantinedCountedAndLogged(t *testing.T) {
	before, after := splitAtRoot(t, testfixtures.Traceloop)
	a := newHarness(t, func(c *Config) { c.IdleTimeout = 10 * time.Second })
	b := newHarness(t, nil)
	logged := a.observeDropLog()

	a.consumeTraces(fromPartition("3"), before)
	b.consumeTraces(fromPartition("3"), after)
	a.advance(10 * time.Second)
	b.advance(2 * time.Second)

	require.Len(t, a.cases(), 1)
	part := a.cases()[0]
	assert.Equal(t, replaycase.StatusQuarantined, part.Status)
	assert.ElementsMatch(t, []string{replaycase.ReasonNoRootSpan, replaycase.ReasonTraceSplit}, reasonCodes(part))
	assert.Len(t, part.Steps, 4, "the part keeps what it holds")
	assertSplitCount(t, a, splitOrphanSpans, 1)

	require.Len(t, logged.All(), 1)
	fields := logged.All()[0].ContextMap()
	assert.Equal(t, part.Provenance.TraceID, fields["trace_id"])
	assert.Equal(t, part.CaseID, fields["case_id"])
	assert.Equal(t, splitOrphanSpans, fields["evidence"])

	require.Len(t, b.cases(), 1)
	rooted := b.cases()[0]
	assert.Equal(t, part.Provenance.TraceID, rooted.Provenance.TraceID, "the parts share the trace id: merge by it")
	assert.NotEqual(t, part.CaseID, rooted.CaseID)
	assert.NotContains(t, reasonCodes(rooted), replaycase.ReasonTraceSplit, "a root span alone shows no cut")
	a.shutdown()
	b.shutdown()
}

// The same cut without Kafka (OTLP straight from an agent) is a rootless trace, not a split:
// the evidence reasons say what is missing and nothing is counted as split.
func TestRootlessTraceFromOTLPIsNotASplit(t *testing.T) {
	before, _ := splitAtRoot(t, testfixtures.Traceloop)
	h := newHarness(t, func(c *Config) { c.IdleTimeout = 10 * time.Second })
	h.sendTraces(before)
	h.advance(10 * time.Second)
	require.Len(t, h.cases(), 1)
	assert.Equal(t, []string{replaycase.ReasonNoRootSpan}, reasonCodes(h.cases()[0]))
	assertNoSplit(t, h)
	h.shutdown()
}

// Every fixture run consumed whole from Kafka is one case without trace_split: spans and
// events all find their parents.
func TestWholeRunsFromKafkaAreNotSplit(t *testing.T) {
	h := newHarness(t, nil)
	fixtures := []string{testfixtures.OTelEvents, testfixtures.OTelNoContent, testfixtures.Traceloop, testfixtures.OpenInference}
	for i, f := range fixtures {
		td, ld := testfixtures.Traces(t, f), testfixtures.Logs(t, f)
		testfixtures.WithTraceID(td, ld, i)
		h.consumeTraces(fromPartition("0"), td)
		h.consumeLogs(fromPartition("0"), ld)
	}
	h.advance(2 * time.Second)
	require.Len(t, h.cases(), len(fixtures))
	for _, c := range h.cases() {
		assert.NotContains(t, reasonCodes(c), replaycase.ReasonTraceSplit, c.Provenance.TraceID)
	}
	assertNoSplit(t, h)
	h.shutdown()
}

// The spans and logs groups rebalance separately: for a moment partition p of the logs topic
// belongs to another collector than partition p of the spans topic. The collector that got only
// the events builds a case with no span: a split.
func TestEventsWithoutTheirSpansAreASplit(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.IdleTimeout = 10 * time.Second })
	h.consumeLogs(fromPartition("1"), testfixtures.Logs(t, testfixtures.OTelEvents))
	h.advance(10 * time.Second)
	require.Len(t, h.cases(), 1)
	c := h.cases()[0]
	assert.Contains(t, reasonCodes(c), replaycase.ReasonTraceSplit)
	assert.Equal(t, int64(testfixtures.Logs(t, testfixtures.OTelEvents).LogRecordCount()), c.Provenance.EventCount,
		"the events are a quarantined case, not passed on to a logs pipeline that tier 2 discards")
	assertSplitCount(t, h, splitNoSpans, 1)
	h.shutdown()
}

// Log events that trail their spans by more than root_grace_period (the logs group lags the
// spans group) arrive after the case closed: the fragment they form is marked as a split, on
// top of late_spans.
func TestEventsAfterTheCaseClosedAreASplit(t *testing.T) {
	h := newHarness(t, nil)
	h.consumeTraces(fromPartition("2"), testfixtures.Traces(t, testfixtures.OTelEvents))
	h.advance(2 * time.Second)
	h.consumeLogs(fromPartition("2"), testfixtures.Logs(t, testfixtures.OTelEvents))
	h.advance(40 * time.Second)
	require.Len(t, h.cases(), 2)
	assert.NotContains(t, reasonCodes(h.cases()[0]), replaycase.ReasonTraceSplit)
	assert.Subset(t, reasonCodes(h.cases()[1]), []string{replaycase.ReasonLateSpans, replaycase.ReasonTraceSplit})
	events := int64(testfixtures.Logs(t, testfixtures.OTelEvents).LogRecordCount())
	assert.Equal(t, events, h.cases()[1].Provenance.EventCount, "the events are in the dataset, in the fragment")
	assertSplitCount(t, h, splitLate, 1)
	h.shutdown()
}

// Fragments past limits.max_spans_per_trace are the processor's own cut, reported as span_limit
// and late_spans: not a split, even from Kafka.
func TestSpanLimitFragmentsFromKafkaAreNotASplit(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Limits.MaxSpansPerTrace = 2 })
	h.consumeTraces(fromPartition("0"), testfixtures.Traces(t, testfixtures.Traceloop))
	h.advance(2 * time.Second)
	require.Len(t, h.cases(), 3)
	for _, c := range h.cases() {
		assert.NotContains(t, reasonCodes(c), replaycase.ReasonTraceSplit)
	}
	assertNoSplit(t, h)
	h.shutdown()
}

// A collector consumed the first part of a run from Kafka, was killed, and came back after its
// partitions had moved on: the part restored from its storage is still known to come from Kafka
// and is marked as a split.
func TestPartRestoredAfterACrashIsStillASplit(t *testing.T) {
	dir := t.TempDir()
	withStorage := func(c *Config) { c.Storage = &storageID; c.IdleTimeout = 10 * time.Second }
	before, _ := splitAtRoot(t, testfixtures.Traceloop)

	first, ext := startWithStorage(t, dir, withStorage)
	first.consumeTraces(fromPartition("5"), before)
	crash(t, first, ext)

	second, ext := startWithStorage(t, dir, withStorage)
	second.advance(10 * time.Second)
	require.Len(t, second.cases(), 1)
	assert.Contains(t, reasonCodes(second.cases()[0]), replaycase.ReasonTraceSplit)
	assertSplitCount(t, second, splitOrphanSpans, 1)
	second.shutdown()
	require.NoError(t, ext.Shutdown(context.Background()))
}
