package replaycaseprocessor

import (
	"cmp"
	"context"
	"slices"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/reprise-dev/reprise/internal/pdatawalk"
)

// A client that sends a whole request again after its case closed (its acknowledgement was
// lost, an exporter retried, Kafka redelivered after a rebalance or a restart) used to add a
// late_spans fragment holding spans the case already had: the open buffers' sets of seen span
// ids were forgotten when the case closed. So each remembered close (recentTraces) also keeps
// the span ids and GenAI event keys its case held; a span or event of a closed trace that one
// of them held is dropped as a duplicate (counted with held_by closed_case, logged with the
// trace id), and only the new ones form the late_spans fragment. A request that is entirely
// duplicates opens no buffer and its write-ahead record is released.
//
// Bounds: the ids of the last limits.max_open_traces closes, at 8 bytes a span id and 16 an
// event key (event_identity.go) in sorted slices, and of those at most
// limits.max_buffered_bytes / closedIDsShare bytes: past it the ids of the oldest closes are
// forgotten first (their closes are still remembered, so their spans that come again are
// late_spans fragments, as before). These bytes are inside max_buffered_bytes, not beside it:
// when the cases and the ids together exceed the limit, the oldest ids are forgotten before an
// open case is closed early or a request refused for memory (withIDs), so the ids never take
// room from open cases, and the limit bounds both. A close stores only the ids no earlier
// remembered close of its trace holds, so the parts of a trace cut at the span limit are not
// stored again part after part. With storage, the closed marks carry the span ids and the event
// keys (closed_marks.go): event keys are the same in every process, so a redelivery after a
// restart is recognised for its events as for its spans.

// closedIDsShare: the ids the closed cases held take at most 1/16 of limits.max_buffered_bytes
// (16 MiB by default: two million span ids), within it.
const closedIDsShare = 16

// heldIDs accounts for the ids the remembered closes hold.
type heldIDs struct {
	budget int64
	bytes  int64
	from   uint64 // the oldest close whose ids are still remembered
	report idsTelemetry
}

// idBytes is the heap of a close's ids: the slices' capacities (closedIDsOf allocates them
// at a size class, so the capacity is what the allocator gave), at least 16 bytes a slice (an
// 8-byte one takes 16 with the race detector, which turns off the tiny allocator).
func (c *recentClose) idBytes() int64 {
	return idSliceBytes(cap(c.spans), memClosedID) + idSliceBytes(cap(c.events), memClosedEventKey)
}

func idSliceBytes(n int, size int64) int64 {
	if n == 0 {
		return 0
	}
	return max(int64(n)*size, 16)
}

// added accounts for close c, just added, and forgets the ids of the oldest closes while the
// budget is exceeded (c's own last, when it alone exceeds it).
func (h *heldIDs) added(r *recentTraces, c recentClose) {
	h.bytes += c.idBytes()
	h.report.remembered(idCountOf(c.spans, c.events), 1)
	for h.bytes > h.budget && h.from < r.total {
		h.forget(r, h.from, forgottenForBudget)
	}
}

// forget forgets the ids of close k, the oldest one still holding ids or older, for reason (nil
// when close k itself is forgotten).
func (h *heldIDs) forget(r *recentTraces, k uint64, reason *idsBySignal) {
	if k < h.from {
		return
	}
	c := &r.ring[k%r.n]
	h.bytes -= c.idBytes()
	n := idCountOf(c.spans, c.events)
	h.report.remembered(n, -1)
	h.report.forgotten(n, reason)
	c.spans, c.events = nil, nil
	h.from = k + 1
}

// withIDs returns cases (bytes of cases counted against limit) plus the bytes of the ids the
// remembered closes hold, after forgetting the ids of the oldest closes while the two exceed
// limit: the ids give way before any case does. Once no id is left, the cases alone are
// counted, and the limits close and refuse cases exactly as they did before the ids were
// counted. Caller holds mu.
func (p *caseProcessor) withIDs(cases, limit int64) int64 {
	h := &p.closed.held
	for cases+h.bytes > limit && h.bytes > 0 {
		h.forget(p.closed, h.from, forgottenForPressure) // bytes > 0: a close at or after from holds ids
	}
	return cases + h.bytes
}

// heldSpan tells whether a remembered closed case of trace id held span s.
func (r *recentTraces) heldSpan(id pcommon.TraceID, s pcommon.SpanID) bool {
	for _, k := range r.closes[id] {
		if _, ok := slices.BinarySearchFunc(r.ring[k%r.n].spans, s, compareSpanIDs); ok {
			return true
		}
	}
	return false
}

// heldEvent tells whether a remembered closed case of trace id held event e.
func (r *recentTraces) heldEvent(id pcommon.TraceID, e eventKey) bool {
	for _, k := range r.closes[id] {
		if _, ok := slices.BinarySearchFunc(r.ring[k%r.n].events, e, compareEventKeys); ok {
			return true
		}
	}
	return false
}

func compareSpanIDs(a, b pcommon.SpanID) int {
	for i := range a {
		if c := cmp.Compare(a[i], b[i]); c != 0 {
			return c
		}
	}
	return 0
}

// closedIDsOf returns, sorted, the ids of seen that no remembered close of trace id holds,
// in a slice the allocator sized (see idBytes); nil when there are none.
func closedIDsOf[K comparable, V any](seen map[K]V, held func(K) bool, compare func(a, b K) int) []K {
	n := 0
	for k := range seen {
		if !held(k) {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	ids := slices.Grow([]K(nil), n)
	for k := range seen {
		if !held(k) {
			ids = append(ids, k)
		}
	}
	slices.SortFunc(ids, compare)
	return ids
}

// rememberClose remembers the close of b, whose case holds the span ids and event keys of its
// seen sets, and returns the span ids and event keys it remembers, for b's closed mark. Caller
// holds mu.
func (p *caseProcessor) rememberClose(b *traceBuffer) ([]pcommon.SpanID, []eventKey) {
	spans := closedIDsOf(b.seenSpans, func(s pcommon.SpanID) bool { return p.closed.heldSpan(b.id, s) }, compareSpanIDs)
	events := closedIDsOf(b.seenEvents, func(e eventKey) bool { return p.closed.heldEvent(b.id, e) }, compareEventKeys)
	p.closed.add(b.id, spans, events)
	return spans, events
}

// heldByClosedCase is the duplicates metric's attribute for items a closed case held.
var heldByClosedCase = attribute.String("held_by", "closed_case")

// dropClosedSpans removes from c the spans that a remembered closed case of its trace held,
// counts and logs them, and tells whether any span is left. Caller holds mu.
func (p *caseProcessor) dropClosedSpans(c *traceChunk) bool {
	if p.closed.count(c.id) == 0 {
		return true
	}
	dups := 0
	forEachScopeSpans(c.td, func(ss ptrace.ScopeSpans) {
		ss.Spans().RemoveIf(func(sp ptrace.Span) bool {
			if id := sp.SpanID(); !id.IsEmpty() && p.closed.heldSpan(c.id, id) {
				dups++
				return true
			}
			return false
		})
	})
	if dups > 0 {
		c.stored = nil // no longer what the write-ahead record holds
		p.closedDuplicates("traces", "spans", c.id, dups, c.td.SpanCount())
	}
	return c.td.SpanCount() > 0
}

// dropClosedEvents is dropClosedSpans for GenAI log events.
func (p *caseProcessor) dropClosedEvents(c *logChunk) bool {
	if p.closed.count(c.id) == 0 {
		return true
	}
	dups := 0
	pdatawalk.RemoveLogRecordsIf(c.ld, func(r pdatawalk.LogRecord) bool {
		if p.closed.heldEvent(c.id, eventIdentity(r.Record)) {
			dups++
			return true
		}
		return false
	})
	if dups > 0 {
		c.stored = nil
		p.closedDuplicates("logs", "GenAI log events", c.id, dups, c.ld.LogRecordCount())
	}
	return c.ld.LogRecordCount() > 0
}

// closedDuplicates counts and logs the dups items of a chunk of trace id that a closed case of
// the trace held; left are the chunk's items still new.
func (p *caseProcessor) closedDuplicates(signal, items string, id pcommon.TraceID, dups, left int) {
	p.telemetry.ProcessorReplayCaseDuplicates.Add(context.Background(), int64(dups), metric.WithAttributes(attribute.String("signal", signal), heldByClosedCase))
	p.logger.Info(items+" a closed case of the trace already held were received again and dropped as duplicates",
		zap.String("trace_id", traceIDText(id)), zap.Int("duplicates", dups), zap.Int("new", left))
}
