package replaycaseprocessor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/processor/replaycaseprocessor/internal/metadatatest"
	"github.com/reprise-dev/reprise/replaycase"
)

// forgotten is the forgotten_ids metric's attribute set.
func forgotten(signal, reason string) attribute.Set {
	return attribute.NewSet(attribute.String("signal", signal), attribute.String("reason", reason))
}

// heldNow counts the span ids and event keys the processor's memory of closes holds.
func heldNow(h *harness) (spans, events int64) {
	h.p.mu.Lock()
	defer h.p.mu.Unlock()
	for _, c := range h.p.closed.ring {
		spans, events = spans+int64(len(c.spans)), events+int64(len(c.events))
	}
	return spans, events
}

// eventRun is the OTel GenAI events run (spans and log events) with trace id n.
func eventRun(t *testing.T, n int) (ptrace.Traces, plog.Logs) {
	td, ld := testfixtures.Traces(t, testfixtures.OTelEvents), testfixtures.Logs(t, testfixtures.OTelEvents)
	testfixtures.WithTraceID(td, ld, n)
	return td, ld
}

// closeRuns sends the runs with trace ids from to to (oneRun), each closed before the next is
// sent, and returns how many spans they hold.
func closeRuns(t *testing.T, h *harness, from, to int) (spans int64) {
	t.Helper()
	for n := from; n <= to; n++ {
		td := oneRun(t, n)
		spans += int64(td.SpanCount())
		h.sendTraces(td)
		h.advance(3 * time.Second)
	}
	return spans
}

// assertRemembered checks remembered_ids against what the memory holds.
func assertRemembered(t *testing.T, h *harness, spans, events int64) {
	t.Helper()
	want := []metricdata.DataPoint[int64]{{Value: spans, Attributes: signal("traces")}}
	if events > 0 {
		want = append(want, metricdata.DataPoint[int64]{Value: events, Attributes: signal("logs")})
	}
	metadatatest.AssertEqualProcessorReplayCaseRememberedIds(t, h.tel, want, metricdatatest.IgnoreTimestamp())
}

// The ids the memory of closes holds, and the ones it forgets past its share of
// limits.max_buffered_bytes, are visible: remembered_ids is what it holds now, and every id
// remembered and then forgotten is in forgotten_ids{reason="memory_budget"}. Before, neither
// was, and a redelivery becoming a late_spans row instead of a duplicate had no warning.
func TestIDsForgottenForTheMemoryBudgetAreCounted(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Limits.MaxBufferedBytes = 16 * 2000 }) // 2,000 bytes of ids
	const runs = 40
	var spans, events int64
	for n := 1; n <= runs; n++ {
		td, ld := eventRun(t, n)
		spans, events = spans+int64(td.SpanCount()), events+int64(ld.LogRecordCount())
		h.sendTraces(td)
		h.sendLogs(ld)
		h.advance(3 * time.Second)
	}
	require.Len(t, h.cases(), runs)
	heldSpans, heldEvents := heldNow(h)
	require.Positive(t, heldSpans, "the newest closes keep their span ids")
	require.Positive(t, heldEvents, "and their event keys")
	require.Less(t, heldSpans+heldEvents, spans+events, "the budget made the memory forget the oldest")

	assertRemembered(t, h, heldSpans, heldEvents)
	metadatatest.AssertEqualProcessorReplayCaseForgottenIds(t, h.tel, []metricdata.DataPoint[int64]{
		{Value: spans - heldSpans, Attributes: forgotten("traces", "memory_budget")},
		{Value: events - heldEvents, Attributes: forgotten("logs", "memory_budget")},
	}, metricdatatest.IgnoreTimestamp())

	// What a forgotten id means: the oldest run sent again is a late fragment, not a duplicate.
	td, ld := eventRun(t, 1)
	h.sendTraces(td)
	h.sendLogs(ld)
	h.advance(time.Hour)
	h.shutdown()
	cases := h.cases()
	require.Len(t, cases, runs+1)
	assert.True(t, cases[runs].HasReason(replaycase.ReasonLateSpans), "%v", reasonCodes(cases[runs]))
}

// The ids forgotten to make room for open cases (cases and ids together at
// limits.max_buffered_bytes) are counted with reason memory_pressure.
func TestIDsForgottenUnderMemoryPressureAreCounted(t *testing.T) {
	h := newHarness(t, nil)
	const closed, open = 200, 10
	spans := closeRuns(t, h, 1, closed)
	require.Len(t, h.cases(), closed)
	assertRemembered(t, h, spans, 0)
	assert.Zero(t, sumOf(t, h, "otelcol_processor_replay_case_forgotten_ids"), "nothing forgotten yet")
	for n := closed + 1; n <= closed+open; n++ {
		h.sendTraces(oneRun(t, n))
	}
	h.p.mu.Lock()
	// Room for one more open run and half the ids.
	h.p.cfg.Limits.MaxBufferedBytes = (open+1)*(h.p.openBytes/open) + h.p.closed.held.bytes/2
	h.p.mu.Unlock()

	h.sendTraces(oneRun(t, closed+open+1))
	held, _ := heldNow(h)
	require.Positive(t, held)
	require.Less(t, held, spans, "the open run made the memory forget the oldest ids")
	assertRemembered(t, h, held, 0)
	metadatatest.AssertEqualProcessorReplayCaseForgottenIds(t, h.tel, []metricdata.DataPoint[int64]{
		{Value: spans - held, Attributes: forgotten("traces", "memory_pressure")},
	}, metricdatatest.IgnoreTimestamp())
	h.shutdown()
}

// A close that leaves the window of limits.max_open_traces closes takes its ids with it: the
// gauge goes down, and nothing is counted as forgotten (the close itself is gone).
func TestIDsOfAClosePastTheWindowAreNotCountedForgotten(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Limits.MaxOpenTraces = 3 })
	spans := closeRuns(t, h, 1, 5)
	require.Len(t, h.cases(), 5)
	held, _ := heldNow(h)
	require.Equal(t, 3*spans/5, held, "the last three closes' ids")
	assertRemembered(t, h, held, 0)
	assert.Zero(t, sumOf(t, h, "otelcol_processor_replay_case_forgotten_ids"))
	h.shutdown()
}

// The ids the closed marks drop on disk past their budget are counted with reason
// storage_budget (they are what a redelivery after a restart can no longer be matched with), and
// after a restart remembered_ids counts the ids the marks brought back.
func TestIDsForgottenOnDiskAreCounted(t *testing.T) {
	const limit = 16 * 1000 // 1,000 bytes of ids
	dir := t.TempDir()
	withStorage := func(c *Config) { c.Storage, c.Limits.MaxBufferedBytes = &storageID, limit }
	first, ext := startWithStorage(t, dir, withStorage)
	const runs = 60
	spans := closeRuns(t, first, 1, runs)
	require.Len(t, first.cases(), runs)
	first.shutdown()
	require.NoError(t, ext.Shutdown(context.Background()))
	bytes, _ := storedMarkIDBytes(t, dir)
	onDisk := bytes / memClosedID // the runs have no events
	require.Less(t, onDisk, spans)
	assert.Equal(t, spans-onDisk, pointOf(t, first, "otelcol_processor_replay_case_forgotten_ids", forgotten("traces", "storage_budget")))

	second, ext := startWithStorage(t, dir, withStorage)
	held, _ := heldNow(second)
	require.Positive(t, held)
	assertRemembered(t, second, held, 0)
	assert.Equal(t, onDisk-held, pointOf(t, second, "otelcol_processor_replay_case_forgotten_ids", forgotten("traces", "memory_budget")),
		"the marks' ids are remembered, or counted forgotten when the memory (counting slice capacity) has no room")
	second.shutdown()
	require.NoError(t, ext.Shutdown(context.Background()))
}

// pointOf is the value of an int64 sum metric's data point with attrs, 0 when it has none.
func pointOf(t *testing.T, h *harness, name string, attrs attribute.Set) int64 {
	t.Helper()
	m, err := h.tel.GetMetric(name)
	if err != nil {
		return 0
	}
	for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
		if dp.Attributes.Equals(&attrs) {
			return dp.Value
		}
	}
	return 0
}
