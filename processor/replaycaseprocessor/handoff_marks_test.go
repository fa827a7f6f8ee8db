package replaycaseprocessor

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/internal/storageclient"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/replaycase"
)

// rootlessRun is the run of fixture (its trace i) without its root span, its root alone, and
// its GenAI log events.
func rootlessRun(t *testing.T, fixture string, i int) (rest, root ptrace.Traces, events plog.Logs) {
	t.Helper()
	fixture, mangled := strings.CutSuffix(fixture, "/invalid-utf8")
	rest, events = testfixtures.Traces(t, fixture), plog.NewLogs()
	if fixture == testfixtures.OTelEvents {
		events = testfixtures.Logs(t, fixture)
	}
	if mangled {
		events.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).Attributes().PutStr("note", "caf\xe9")
	}
	testfixtures.WithTraceID(rest, events, i)
	root = copyOf(rest)
	forEachScopeSpans(rest, func(ss ptrace.ScopeSpans) {
		ss.Spans().RemoveIf(func(sp ptrace.Span) bool { return sp.ParentSpanID().IsEmpty() })
	})
	forEachScopeSpans(root, func(ss ptrace.ScopeSpans) {
		ss.Spans().RemoveIf(func(sp ptrace.Span) bool { return !sp.ParentSpanID().IsEmpty() })
	})
	require.Positive(t, rest.SpanCount())
	require.Equal(t, 1, root.SpanCount())
	return rest, root, events
}

// The doubling defect (README, Durability; FuzzEveryRunEndsInOnePlace, inputs 21c7eb13d787ec6f
// and 152c8ebbcdd253c5): a case closed without its root (idle_timeout), written by the next
// consumer, and the process killed before the release. After the restart its root arrives.
// The case must come back as the closed case it was (same case_id, resent), and the root form a
// late fragment of its own: one row per case_id, no span in two rows. Restored as an open case,
// the root joined it, changed its case_id, and the spans written before the kill were in two
// rows with different case_ids.
func TestACaseKilledInItsHandOffComesBackClosed(t *testing.T) {
	idle := func(h *harness) error { // idle_timeout (30 s) closes it
		h.clock = h.clock.Add(31 * time.Second)
		return h.p.sweep(context.Background())
	}
	for _, tc := range []struct {
		name      string
		fixture   string
		close     func(h *harness) error
		maxEvents int
	}{
		{"idle_timeout", testfixtures.Traceloop, idle, 0},
		{"idle_timeout with events", testfixtures.OTelEvents, idle, 0},
		// Stored as received: an event that sanitizing repairs has the identity the mark names
		// only once repaired (FuzzEveryRunEndsInOnePlace, a6ec991f4c8cb175).
		{"idle_timeout with an event to repair", testfixtures.OTelEvents + "/invalid-utf8", idle, 0},
		// The events past the limit are in the records but in no case: dropped again, and the
		// case keeps its event_limit reason.
		{"idle_timeout past the event limit", testfixtures.OTelEvents, idle, 5},
		{"max_age", testfixtures.Traceloop, func(h *harness) error {
			for range 11 { // a span every 29 s keeps it from idling: max_age (5 min) closes it
				h.clock = h.clock.Add(29 * time.Second)
				if err := h.p.sweep(context.Background()); err != nil || len(h.p.pending) > 0 {
					return err
				}
				rest, _, _ := rootlessRun(h.t, testfixtures.Traceloop, 0)
				h.sendTraces(rest) // duplicates: they refresh nothing but lastSeen
			}
			return nil
		}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			withStorage := func(c *Config) {
				c.Storage, c.RawSpans = &storageID, rawAll
				if tc.maxEvents > 0 {
					c.Limits.MaxEventsPerTrace = tc.maxEvents
				}
			}
			first, ext := startWithStorage(t, dir, withStorage)
			next := &writeThenDie{records: func() int { return 0 }}
			first.p.nextTraces = next
			rest, root, events := rootlessRun(t, tc.fixture, 0)
			if events.LogRecordCount() > 0 {
				first.sendLogs(events)
			}
			first.sendTraces(rest)
			require.Error(t, tc.close(first), "the hand-off did not return nil")
			require.Len(t, next.sink, 1, "the case was written")
			written := next.sink[0]
			crash(t, first, ext)

			second, ext := startWithStorage(t, dir, withStorage)
			second.sendTraces(root) // the root, after the restart
			second.advance(time.Hour)
			second.shutdown()
			require.NoError(t, ext.Shutdown(context.Background()))

			rows := map[string]*replaycase.Case{written.CaseID: written}
			for _, c := range second.cases() {
				rows[c.CaseID] = c // a reader keeps the last row of a case_id
			}
			require.Len(t, rows, 2, "the case written and the root's late fragment")
			again := rows[written.CaseID]
			assert.True(t, again.Resent, "sent again as it was written")
			assert.Equal(t, rawSpanIDs(t, written), rawSpanIDs(t, again), "the same spans as the copy written")
			assert.Equal(t, reasonCodes(written), reasonCodes(again))
			assert.Equal(t, written.ClosedBy, again.ClosedBy)
			assert.Equal(t, written.Provenance.EventCount, again.Provenance.EventCount)
			placed := map[string]string{}
			for id, c := range rows {
				for _, span := range rawSpanIDs(t, c) {
					require.Empty(t, placed[span], "span %s is in %s and %s", span, placed[span], id)
					placed[span] = id
				}
				if id != written.CaseID {
					assert.Contains(t, reasonCodes(c), string(replaycase.ReasonLateSpans), "the root is a late fragment")
					assert.Equal(t, int64(1), c.Provenance.SpanCount)
					assert.Zero(t, c.Provenance.EventCount, "the events are the written case's")
					assert.False(t, c.Resent, "the root arrived after the restart")
				}
			}

			third, ext := startWithStorage(t, dir, withStorage)
			assert.Empty(t, handoffKeys(t, third), "hand-off marks are deleted with the release")
			third.shutdown()
			require.NoError(t, ext.Shutdown(context.Background()))
			assert.Empty(t, third.cases(), "nothing left in storage")
		})
	}
}

// handoffKeys lists the stored hand-off marks.
func handoffKeys(t *testing.T, h *harness) []string {
	t.Helper()
	var keys []string
	require.NoError(t, h.p.wal.walker.Walk(context.Background(), func(key string, _ []byte) ([]*storage.Operation, error) {
		if strings.HasPrefix(key, "handoff/") {
			keys = append(keys, key)
		}
		return nil, nil
	}))
	return keys
}

// A part of a trace cut at limits.max_spans_per_trace killed in its hand-off comes back as that
// part, and the part that continues it is the part it would have been without the kill: the
// resume mark is stored with the hand-off mark (TestRestartAfterASpanLimitPartSendsOnlyTheRest
// is the kill after the release).
func TestASpanLimitPartKilledInItsHandOffComesBackAsThatPart(t *testing.T) {
	withLimit := func(c *Config) { c.Limits.MaxSpansPerTrace, c.RawSpans = 3, rawAll }
	withStorage := func(c *Config) { c.Storage = &storageID; withLimit(c) }
	reference := newHarness(t, withLimit)
	reference.sendTraces(testfixtures.Traces(t, testfixtures.Traceloop)) // 5 spans: parts of 3 and 2
	reference.shutdown()
	want := reference.cases()
	require.Len(t, want, 2)

	dir := t.TempDir()
	first, ext := startWithStorage(t, dir, withStorage)
	next := &writeThenDie{records: func() int { return 0 }}
	first.p.nextTraces = next
	first.sendTraces(testfixtures.Traces(t, testfixtures.Traceloop))
	require.Error(t, first.p.sweep(context.Background()), "the hand-off did not return nil")
	require.Len(t, next.sink, 1, "the first part was written")
	crash(t, first, ext)

	second, ext := startWithStorage(t, dir, withStorage)
	second.shutdown()
	require.NoError(t, ext.Shutdown(context.Background()))
	got := second.cases()
	require.Len(t, got, 2, "each part once")
	for i := range want {
		assert.Equal(t, want[i].CaseID, got[i].CaseID, "part %d", i)
		assert.Equal(t, rawSpanIDs(t, want[i]), rawSpanIDs(t, got[i]), "part %d holds its own spans", i)
		assert.Equal(t, reasonCodes(want[i]), reasonCodes(got[i]), "part %d", i)
	}
	assert.True(t, got[0].Resent, "the part written before the kill")
	assert.Equal(t, next.sink[0].CaseID, got[0].CaseID)

	third, ext := startWithStorage(t, dir, withStorage)
	assert.Empty(t, handoffKeys(t, third))
	third.shutdown()
	require.NoError(t, ext.Shutdown(context.Background()))
	assert.Empty(t, third.cases(), "nothing left in storage")
}

// A hand-off mark reads back as written, and its closed mark's value is the closed mark's.
func TestHandoffValueRoundTrips(t *testing.T) {
	in := closedRun{selectedBy: "rule:x", spans: []pcommon.SpanID{{1}, {2}}, events: []eventKey{{3}},
		cause: replaycase.ClosedIdle, detail: "nothing arrived for 30s", fragment: 2, spanLimitPart: true, noIDSpans: 1, droppedEvents: 4}
	v := handoffValue(&in)
	assert.Equal(t, closedValue(in), in.value)
	var out closedRun
	require.NoError(t, readHandoffValue(v, &out))
	out.value = in.value
	assert.Equal(t, in, out)
	for n := range len(v) - 1 {
		var cut closedRun
		if readHandoffValue(v[:n], &cut) == nil { // a cut that ends where an id ends
			cut.id, cut.value = in.id, in.value
			assert.NotEqual(t, in, cut, "cut at %d reads as the whole value", n)
		}
	}
}

// Marks an older build released the case of (or whose records are gone) are deleted on start.
func TestStaleHandoffMarksAreDeleted(t *testing.T) {
	dir := t.TempDir()
	host, ext := startFileStorage(t, dir)
	h := newHarness(t, func(c *Config) { c.Storage = &storageID })
	run := closedRun{id: pcommon.TraceID{9}, cause: replaycase.ClosedIdle}
	key := closedMark{seq: 1, id: run.id}.keyAt(handoffPrefix)
	client, err := storageclient.Open(context.Background(), host, storageID, component.KindProcessor, h.p.id)
	require.NoError(t, err)
	require.NoError(t, client.Batch(context.Background(), storage.SetOperation(key, handoffValue(&run)),
		storage.SetOperation(handoffPrefix+"junk", []byte{1})))
	require.NoError(t, client.Close(context.Background()))
	require.NoError(t, h.traces.Start(context.Background(), host))
	assert.Empty(t, handoffKeys(t, h))
	assert.Zero(t, h.p.closed.count(run.id), "not remembered as a close")
	h.shutdown()
	require.NoError(t, ext.Shutdown(context.Background()))
}
