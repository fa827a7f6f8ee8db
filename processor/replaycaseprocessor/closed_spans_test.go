package replaycaseprocessor

import (
	"context"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/processor/replaycaseprocessor/internal/metadatatest"
	"github.com/reprise-dev/reprise/replaycase"
)

// closedDups is the duplicates metric's attribute set for items a closed case held.
func closedDups(s string) attribute.Set {
	return attribute.NewSet(attribute.String("signal", s), attribute.String("held_by", "closed_case"))
}

// withNewSpanID gives the first span of td (a copy of a request sent before) an id never sent,
// keeping its parent: the request a client re-sends with one span it had not sent yet.
func withNewSpanID(td ptrace.Traces) ptrace.Traces {
	done := false
	forEachTestSpan(td, func(sp ptrace.Span) {
		if !done {
			sp.SetSpanID(pcommon.SpanID{0xEE, 0xEE, 0xEE, 0xEE, 1, 2, 3, 4})
			done = true
		}
	})
	return td
}

// A client re-sends a whole request (spans and GenAI log events) after its case closed: its
// acknowledgement was lost, or an exporter retried. The retry adds no row: its spans and events
// are the case's, dropped as duplicates, counted and logged with the trace id; no buffer is
// opened for it and no fragment number is taken.
func TestFullRetryAfterCloseAddsNoRow(t *testing.T) {
	h := newHarness(t, nil)
	core, logs := observer.New(zap.InfoLevel)
	h.p.logger = zap.New(core)
	td, ld := testfixtures.Traces(t, testfixtures.OTelEvents), testfixtures.Logs(t, testfixtures.OTelEvents)
	spans, events := td.SpanCount(), ld.LogRecordCount()
	retry, retryLogs := ptrace.NewTraces(), plog.NewLogs()
	td.CopyTo(retry)
	ld.CopyTo(retryLogs)
	h.sendTraces(td)
	h.sendLogs(ld)
	h.advance(3 * time.Second)
	require.Len(t, h.cases(), 1)
	run := h.cases()[0]

	h.sendLogs(retryLogs)
	h.sendTraces(retry)
	h.p.mu.Lock()
	assert.Empty(t, h.p.open, "the retry opens no buffer")
	h.p.mu.Unlock()
	h.advance(time.Hour)
	h.shutdown()

	cases := h.cases()
	require.Len(t, cases, 1, "one row for the trace")
	assert.Equal(t, run.CaseID, cases[0].CaseID)
	metadatatest.AssertEqualProcessorReplayCaseDuplicates(t, h.tel, []metricdata.DataPoint[int64]{
		{Value: int64(spans), Attributes: closedDups("traces")},
		{Value: int64(events), Attributes: closedDups("logs")},
	}, metricdatatest.IgnoreTimestamp())
	logged := logs.FilterField(zap.String("trace_id", run.Provenance.TraceID)).All()
	require.Len(t, logged, 2, "one line for the spans, one for the events")
	assert.Contains(t, logged[1].Message, "spans")
	assert.Equal(t, int64(spans), logged[1].ContextMap()["duplicates"])
	assert.Contains(t, logged[0].Message, "events")
	assert.Equal(t, int64(events), logged[0].ContextMap()["duplicates"])
}

// A client re-sends a request after its case closed with one span it had not sent: only that
// span forms the late_spans fragment, under a case_id of its own.
func TestRetryWithANewSpanAfterCloseHoldsOnlyTheNewSpan(t *testing.T) {
	h := newHarness(t, nil)
	td := testfixtures.Traces(t, testfixtures.Traceloop)
	retry := withNewSpanID(copyOf(td))
	h.sendTraces(td)
	h.advance(3 * time.Second)
	h.sendTraces(retry)
	h.advance(time.Hour)
	h.shutdown()
	cases := h.cases()
	require.Len(t, cases, 2)
	assert.Equal(t, replaycase.StatusAccepted, cases[0].Status, "%v", reasonCodes(cases[0]))
	assert.Equal(t, int64(5), cases[0].Provenance.SpanCount)
	assert.True(t, cases[1].HasReason(replaycase.ReasonLateSpans), "%v", reasonCodes(cases[1]))
	assert.Equal(t, int64(1), cases[1].Provenance.SpanCount, "the fragment holds the new span only")
	assert.NotEqual(t, cases[0].CaseID, cases[1].CaseID)
	metadatatest.AssertEqualProcessorReplayCaseDuplicates(t, h.tel, []metricdata.DataPoint[int64]{
		{Value: 4, Attributes: closedDups("traces")},
	}, metricdatatest.IgnoreTimestamp())
}

// A trace cut at the span limit: a retry of the whole request after every part closed adds
// nothing, though each part remembers only the ids the parts before it did not.
func TestFullRetryOfATraceCutAtTheSpanLimitAfterCloseAddsNoRow(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Limits.MaxSpansPerTrace = 2 })
	h.sendTraces(testfixtures.Traces(t, testfixtures.Traceloop)) // 5 spans: parts of 2, 2 and 1
	h.advance(time.Hour)
	require.Len(t, h.cases(), 3)
	h.sendTraces(testfixtures.Traces(t, testfixtures.Traceloop))
	h.advance(time.Hour)
	h.shutdown()
	cases := h.cases()
	require.Len(t, cases, 3, "the parts of the first delivery, no more")
	assertEachSpanOnce(t, cases, 5)
	h.p.mu.Lock()
	defer h.p.mu.Unlock()
	held := 0
	for _, c := range h.p.closed.ring {
		held += len(c.spans)
	}
	assert.Equal(t, 5, held, "each span id is remembered once")
}

// With storage, a redelivery after a restart (graceful, or kill -9 after the case was sent) is
// recognised too: the closed marks carry the span ids. The redelivered request adds no row and
// its write-ahead record is deleted; a span it had not sent forms a late_spans fragment alone.
func TestRedeliveryAfterARestartIsADuplicate(t *testing.T) {
	for _, tc := range []struct {
		name string
		stop func(t *testing.T, h *harness, ext extension.Extension)
	}{
		{"graceful restart", func(t *testing.T, h *harness, ext extension.Extension) {
			h.shutdown()
			require.NoError(t, ext.Shutdown(context.Background()))
		}},
		{"kill -9 after the case was sent", crash},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			withStorage := func(c *Config) { c.Storage = &storageID }
			head, tail := halves(t, 1) // tail: the request holding the root span

			first, ext := startWithStorage(t, dir, withStorage)
			first.sendTraces(copyOf(head))
			first.sendTraces(copyOf(tail))
			first.advance(3 * time.Second)
			require.Len(t, first.cases(), 1)
			run := first.cases()[0]
			require.Equal(t, replaycase.StatusAccepted, run.Status, "%v", run.Reasons)
			tc.stop(t, first, ext)

			second, ext := startWithStorage(t, dir, withStorage)
			second.sendTraces(copyOf(tail)) // the redelivery
			second.sendTraces(copyOf(head))
			recs, err := second.p.wal.records(context.Background())
			require.NoError(t, err)
			assert.Zero(t, len(recs), "the redelivered records are deleted")
			second.advance(time.Hour)
			assert.Empty(t, second.cases(), "the redelivery adds no row")

			second.sendTraces(withNewSpanID(copyOf(head))) // one span not sent before
			second.advance(time.Hour)
			second.shutdown()
			require.NoError(t, ext.Shutdown(context.Background()))
			cases := second.cases()
			require.Len(t, cases, 1)
			assert.NotEqual(t, run.CaseID, cases[0].CaseID, "the fragment must not supersede the run's case")
			assert.Equal(t, run.Provenance.TraceID, cases[0].Provenance.TraceID)
			assert.True(t, cases[0].HasReason(replaycase.ReasonLateSpans), "%v", reasonCodes(cases[0]))
			assert.Equal(t, int64(1), cases[0].Provenance.SpanCount, "the new span only")
			metadatatest.AssertEqualProcessorReplayCaseDuplicates(t, second.tel, []metricdata.DataPoint[int64]{
				{Value: 1 + 4 + 3, Attributes: closedDups("traces")},
			}, metricdatatest.IgnoreTimestamp())
		})
	}
}

// A late request (the run's spans again and one span not sent before, after the case closed)
// that its client sends again: while its late_spans fragment is open, after the fragment
// closed, and after a kill -9 once the fragment was sent. Each close of the trace is
// remembered with its own span ids, the fragment's too: the late span is in one fragment, and
// no retry adds a row.
func TestRetriesOfALateRequestAddNoSecondFragment(t *testing.T) {
	dir := t.TempDir()
	withStorage := func(c *Config) { c.Storage = &storageID }
	td := testfixtures.Traces(t, testfixtures.Traceloop)
	late := withNewSpanID(copyOf(td))

	first, ext := startWithStorage(t, dir, withStorage)
	first.sendTraces(copyOf(td))
	first.advance(3 * time.Second)
	require.Len(t, first.cases(), 1)
	first.sendTraces(copyOf(late))
	first.sendTraces(copyOf(late)) // while its fragment is open
	first.advance(time.Hour)
	first.sendTraces(copyOf(late)) // after the fragment closed
	first.advance(time.Hour)
	cases := first.cases()
	crash(t, first, ext)

	second, ext := startWithStorage(t, dir, withStorage)
	second.sendTraces(copyOf(late)) // after the restart
	second.advance(time.Hour)
	second.shutdown()
	require.NoError(t, ext.Shutdown(context.Background()))
	assert.Empty(t, second.cases(), "no retry adds a row")
	require.Len(t, cases, 2, "the run and one fragment")
	assert.Equal(t, int64(5), cases[0].Provenance.SpanCount)
	assert.True(t, cases[1].HasReason(replaycase.ReasonLateSpans), "%v", reasonCodes(cases[1]))
	assert.Equal(t, int64(1), cases[1].Provenance.SpanCount, "the late span, once")
}

// Marks written before they carried span ids (version 1: the version byte and why select kept
// the run) are still read: the close is remembered, so a redelivery is a late_spans fragment
// (its ids are unknown: treated as new, as before), never a first case under the run's case_id.
func TestVersion1ClosedMarksAreRestored(t *testing.T) {
	dir := t.TempDir()
	withStorage := func(c *Config) { c.Storage = &storageID }
	reference := newHarness(t, nil)
	reference.sendTraces(oneRun(t, 1))
	reference.advance(3 * time.Second)
	reference.shutdown()
	require.Len(t, reference.cases(), 1)

	host, ext := startFileStorage(t, dir)
	client, err := host.exts[storageID].(storage.Extension).GetClient(context.Background(), component.KindProcessor, component.MustNewID("replay_case"), "")
	require.NoError(t, err)
	id := pcommon.TraceID{2: 1, 15: 0xee} // testfixtures.WithTraceID's id for run 1
	require.NoError(t, client.Set(context.Background(), closedMark{seq: 7, id: id}.key(), []byte{closedMarkVersion1}))
	require.NoError(t, client.Close(context.Background()))
	require.NoError(t, ext.Shutdown(context.Background()))

	h, ext := startWithStorage(t, dir, withStorage)
	h.p.mu.Lock()
	assert.Equal(t, 1, h.p.closed.count(id), "the version 1 mark is remembered")
	h.p.mu.Unlock()
	h.sendTraces(oneRun(t, 1))
	h.shutdown()
	require.NoError(t, ext.Shutdown(context.Background()))
	cases := h.cases()
	require.Len(t, cases, 1)
	assert.True(t, cases[0].HasReason(replaycase.ReasonLateSpans), "%v", reasonCodes(cases[0]))
	assert.NotEqual(t, reference.cases()[0].CaseID, cases[0].CaseID)
}

// A mark's value reads back as written; any other value reads without a panic, as sorted ids
// and keys.
func FuzzClosedMarkValue(f *testing.F) {
	f.Add("error_root", []byte("0123456789abcdef"), []byte("0123456789abcdef"), []byte{2, 0, 1, 2, 3, 4, 5, 6, 7, 8})
	f.Add("", []byte{}, []byte{}, []byte{1, 'x'})
	f.Add("x", []byte{}, []byte{}, []byte{3, 1, 'x', 1, 1, 2, 3, 4, 5, 6, 7, 8, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15})
	f.Fuzz(func(t *testing.T, by string, ids, keys []byte, value []byte) {
		var spans []pcommon.SpanID
		for ; len(ids) >= 8; ids = ids[8:] {
			spans = append(spans, pcommon.SpanID(ids[:8]))
		}
		var events []eventKey
		for ; len(keys) >= 16; keys = keys[16:] {
			events = append(events, eventKey(keys[:16]))
		}
		gotBy, gotSpans, gotEvents := readClosedValue(closedValue(closedRun{selectedBy: by, spans: spans, events: events}))
		if gotBy != by || len(gotSpans) != len(spans) || len(gotEvents) != len(events) {
			t.Fatalf("read %q, %d ids, %d keys; wrote %q, %d, %d", gotBy, len(gotSpans), len(gotEvents), by, len(spans), len(events))
		}
		for _, s := range spans {
			if _, ok := findSpanID(gotSpans, s); !ok {
				t.Fatalf("span id %s written, not read back", s)
			}
		}
		for _, k := range events {
			if !slices.Contains(gotEvents, k) {
				t.Fatalf("event key %x written, not read back", k)
			}
		}
		_, read, readKeys := readClosedValue(value)
		if !slices.IsSortedFunc(read, compareSpanIDs) || !slices.IsSortedFunc(readKeys, compareEventKeys) {
			t.Fatalf("ids read unsorted: %v %v", read, readKeys)
		}
	})
}

func findSpanID(ids []pcommon.SpanID, s pcommon.SpanID) (int, bool) {
	for i, id := range ids {
		if id == s {
			return i, true
		}
	}
	return 0, false
}

// The ids the closed cases held are bounded: by the window of closes, and by the byte budget,
// past which the oldest closes' ids are forgotten first while their closes stay remembered.
func TestClosedIDsAreBounded(t *testing.T) {
	ids := func(first, n int) map[pcommon.SpanID]struct{} {
		m := map[pcommon.SpanID]struct{}{}
		for i := first; i < first+n; i++ {
			m[pcommon.SpanID{byte(i >> 8), byte(i), 1}] = struct{}{}
		}
		return m
	}
	trace := func(n byte) pcommon.TraceID { return pcommon.TraceID{n} }
	add := func(r *recentTraces, id pcommon.TraceID, seen map[pcommon.SpanID]struct{}) {
		r.add(id, closedIDsOf(seen, func(s pcommon.SpanID) bool { return r.heldSpan(id, s) }, compareSpanIDs), nil)
	}
	r := newRecentTraces(3, 3*8*8, idsTelemetry{}) // three closes of 8 ids
	for i := range 3 {
		add(r, trace(byte(i)), ids(8*i, 8))
	}
	assert.Equal(t, int64(3*8*8), r.held.bytes)
	assert.True(t, r.heldSpan(trace(0), pcommon.SpanID{0, 0, 1}))
	add(r, trace(3), ids(100, 8)) // the window pushes close 0 out
	assert.Zero(t, r.count(trace(0)))
	assert.False(t, r.heldSpan(trace(0), pcommon.SpanID{0, 0, 1}))
	assert.Equal(t, int64(3*8*8), r.held.bytes)

	add(r, trace(4), ids(200, 16)) // over the budget: the oldest ids go first
	assert.LessOrEqual(t, r.held.bytes, r.held.budget)
	assert.Equal(t, 1, r.count(trace(2)), "its close is still remembered")
	assert.False(t, r.heldSpan(trace(2), pcommon.SpanID{0, 16, 1}), "its ids are forgotten")
	assert.True(t, r.heldSpan(trace(3), pcommon.SpanID{0, 100, 1}), "the budget holds it and trace 4's")
	assert.True(t, r.heldSpan(trace(4), pcommon.SpanID{0, 200, 1}))

	add(r, trace(5), ids(300, 100)) // alone past the budget: remembered without ids
	assert.Equal(t, 1, r.count(trace(5)))
	assert.False(t, r.heldSpan(trace(5), pcommon.SpanID{1, 44, 1}))
	assert.Zero(t, r.held.bytes)
	for range 3 { // the window turns over: nothing left accounted
		add(r, trace(9), nil)
	}
	assert.Zero(t, r.held.bytes)
	assert.Equal(t, 3, r.count(trace(9)))
}

// What the budget counts for the ids the closed cases held covers the heap they take.
func TestClosedIDsAccountingCoversTheHeap(t *testing.T) {
	for _, n := range []int{1, 5, 37, 600} {
		closes := 20_000
		if n > 100 {
			closes = 2_000 // as many bytes, fewer slices: the race detector is slow
		}
		const noise = 64 << 10 // the test's own heap moves by a few kB between two readings
		seen, seenEvents := map[pcommon.SpanID]struct{}{}, map[eventKey]struct{}{}
		for i := range n {
			seen[pcommon.SpanID{byte(i >> 8), byte(i), 7}] = struct{}{}
			seenEvents[eventKey{byte(i >> 8), byte(i), 9}] = struct{}{}
		}
		notHeld := func(pcommon.SpanID) bool { return false }
		noEvent := func(eventKey) bool { return false }
		kept := make([]recentClose, closes)
		before := int64(heapInUse())
		for i := range kept {
			kept[i].spans = closedIDsOf(seen, notHeld, compareSpanIDs)
			kept[i].events = closedIDsOf(seenEvents, noEvent, compareEventKeys)
		}
		held := int64(heapInUse()) - before
		accounted := int64(0)
		for i := range kept {
			accounted += kept[i].idBytes()
		}
		t.Logf("%d span ids and %d event keys: heap %d B/close, accounted %d", n, n, held/int64(closes), accounted/int64(closes))
		assert.GreaterOrEqual(t, accounted+noise, held, "the accounting covers the heap")
		runtime.KeepAlive(kept)
	}
}
