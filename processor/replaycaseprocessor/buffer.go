package replaycaseprocessor

import (
	"container/list"
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/reprise-dev/reprise/internal/pdatawalk"
	"github.com/reprise-dev/reprise/replaycase"
)

// traceBuffer is one open case.
type traceBuffer struct {
	id            pcommon.TraceID
	held          heldTelemetry // the spans and events, as protobuf until the case is built
	spanCount     int
	eventCount    int
	bytes         int64 // heap held: encodings and bookkeeping while open, the pdata estimate (memsize.go) once built
	firstSeen     time.Time
	lastSeen      time.Time
	rootSeen      bool
	fragment      int  // 0 for the first case of a trace, n for its n-th later fragment
	spanLimitPart bool // continues a case closed at limits.max_spans_per_trace, not a late arrival
	fromKafka     bool // holds data consumed from Kafka, so a partial trace is a split (split_trace.go)
	seenSpans     map[pcommon.SpanID]spanPrint
	seenEvents    map[eventKey]struct{}
	repaired      int        // strings repaired to valid UTF-8
	masked        bool       // holds telemetry scrubbing masked something in (scrub_intake.go)
	live          bool       // holds telemetry received since the start: else its case is Resent (verdict.go)
	droppedEvents int        // events past limits.max_events_per_trace
	reusedSpanIDs int        // spans dropped for reusing another span's id (span_print.go)
	walKeys       []string   // write-ahead records holding this buffer's telemetry
	marker        *walMarker // stored when this part, closed at the span limit, is released (span_limit_resume.go)
	handoffKey    string     // the stored hand-off mark this closed case was restored from (handoff_marks.go)
	elem          *list.Element
}

func newTraceBuffer(id pcommon.TraceID, now time.Time, fragment int) *traceBuffer {
	return &traceBuffer{
		id: id, firstSeen: now, lastSeen: now, fragment: fragment,
		seenSpans: map[pcommon.SpanID]spanPrint{}, seenEvents: map[eventKey]struct{}{},
	}
}

// bufferTraces sanitizes the chunks of one request (or of one stored record at start) and puts
// them into their buffers, closing the cases the limits close. It reports what sanitizing fixed
// and whether Shutdown has already flushed the buffers.
func (p *caseProcessor) bufferTraces(chunks []*traceChunk) (fixed sanitized, stopped bool) {
	for _, c := range chunks {
		fixed.add(c.sanitized(sanitizeTraces(c.td)))
	}
	p.mu.Lock()
	now := p.now()
	var due []closing
	for _, c := range chunks {
		due = p.addSpans(c, now, due)
	}
	p.outbox = append(p.outbox, p.enforceLimits(due)...)
	stopped = p.stopped
	p.mu.Unlock()
	p.wal.release(context.Background(), redundantKeys(chunks), nil, nil)
	return fixed, stopped
}

// bufferLogs is bufferTraces for GenAI log events.
func (p *caseProcessor) bufferLogs(chunks []*logChunk) (fixed sanitized, stopped bool) {
	for _, c := range chunks {
		fixed.add(c.sanitized(sanitizeLogs(c.ld)))
	}
	p.mu.Lock()
	now := p.now()
	for _, c := range chunks {
		p.addEvents(c, now)
	}
	p.outbox = append(p.outbox, p.enforceLimits(nil)...)
	stopped = p.stopped
	p.mu.Unlock()
	p.wal.release(context.Background(), redundantKeys(chunks), nil, nil)
	return fixed, stopped
}

// redundantKeys lists the write-ahead records of the chunks that buffering left empty (every
// span or event in one was a duplicate, or past the event limit): nothing holds them, and a
// client retrying a request would otherwise add a record per retry until its case is sent. The
// caller deletes them in one transaction, without mu: deleting is storage I/O.
func redundantKeys[C interface{ meta() *chunkMeta }](chunks []C) []string {
	var keys []string
	for _, c := range chunks {
		if m := c.meta(); m.redundant {
			keys = append(keys, m.walKeys...)
		}
	}
	return keys
}

// sanitized records in the chunk what sanitizing it did, and returns it. A chunk that
// sanitizing changed is no longer what its write-ahead record holds.
func (c *chunkMeta) sanitized(s sanitized) sanitized {
	c.repaired = s.repaired
	if s != (sanitized{}) {
		c.stored = nil
	}
	return s
}

// buffer returns the open buffer of a trace, opening one if needed. Caller holds mu.
func (p *caseProcessor) buffer(id pcommon.TraceID, now time.Time) *traceBuffer {
	b, ok := p.open[id]
	if !ok {
		b = newTraceBuffer(id, now, p.closed.count(id))
		p.resume(b)
		b.elem = p.order.PushBack(b)
		p.open[id] = b
		b.bytes = memOpenBuffer + int64(len(b.seenSpans))*memSeenItem // resume may have seeded it
		p.bytes += b.bytes
		p.openBytes += b.bytes
		ctx := context.Background()
		p.telemetry.ProcessorReplayCaseOpenCases.Add(ctx, 1)
		p.telemetry.ProcessorReplayCaseBufferedBytes.Add(ctx, b.bytes)
	}
	b.lastSeen = now
	return b
}

// addSpans puts one trace's chunk into its buffer, without the spans the buffer already holds.
// A buffer full at limits.max_spans_per_trace is closed and the rest of the chunk starts the
// next fragment, so no span is left out. Caller holds mu.
func (p *caseProcessor) addSpans(c *traceChunk, now time.Time, due []closing) []closing {
	if c.id.IsEmpty() {
		// Without a trace id nothing can be grouped: the chunk is a case of its own.
		b := newTraceBuffer(c.id, now, 0)
		b.repaired, b.walKeys, b.masked, b.live = c.repaired, c.walKeys, c.masked, !c.restored
		p.wal.hold(c.walKeys)
		b.rootSeen = p.dedupeSpans(c, b) > 0
		b.spanCount = c.td.SpanCount()
		b.bytes = memOpenBuffer + b.held.addTraces(c.td, c.stored) + int64(b.spanCount)*memSeenItem
		p.bytes += b.bytes
		p.telemetry.ProcessorReplayCaseBufferedBytes.Add(context.Background(), b.bytes)
		return append(due, closing{buf: b, cause: replaycase.ClosedInvalidTraceID, detail: "spans without a trace id"})
	}
	if !p.dropClosedSpans(c) { // every span was one a closed case of the trace held
		c.redundant = true
		return due
	}
	rootSeen := false         // the case just closed at the span limit had its root
	var prev *traceBuffer     // the case just closed at the span limit, which b continues
	var sent []pcommon.SpanID // the chunk's spans in the cases closed at the span limit
	var seen seenSets         // what prev and the parts before it held
	for {
		b := p.buffer(c.id, now)
		// A fragment cut off at the span limit of a trace whose root has arrived closes after
		// the root grace period, like the case it continues, not after idle_timeout.
		b.rootSeen = b.rootSeen || rootSeen
		if prev != nil {
			b.spanLimitPart = true
			p.markContinuation(prev, b, sent)
			p.inheritSeen(b, seen)
		}
		b.fromKafka = b.fromKafka || c.fromKafka
		if p.dedupeSpans(c, b) > 0 {
			b.rootSeen = true
		}
		n := c.td.SpanCount()
		if n == 0 { // every span was a duplicate: the chunk adds nothing
			c.redundant = true
			return due
		}
		b.repaired += c.repaired
		c.repaired = 0
		b.live = b.live || !c.restored
		b.masked = b.masked || c.masked             // every part of the chunk: any may hold its placeholders
		b.walKeys = append(b.walKeys, c.walKeys...) // each fragment holds the chunk's record
		p.wal.hold(c.walKeys)
		room := p.cfg.Limits.MaxSpansPerTrace - b.spanCount
		part, stored := c.td, c.stored
		if n > room {
			part, stored, c.stored = takeSpans(c.td, room), nil, nil
		}
		p.grow(b, part.SpanCount(), b.held.addTraces(part, stored))
		b.spanCount += part.SpanCount()
		if n <= room {
			return due
		}
		rootSeen, prev, sent = b.rootSeen, b, appendSpanIDs(sent, part)
		// dedupeSpans put the whole chunk in b's set: the spans left for the next part are not
		// b's. What remains is passed on, as take forgets it.
		forEachScopeSpans(c.td, func(ss ptrace.ScopeSpans) {
			for i := 0; i < ss.Spans().Len(); i++ {
				delete(b.seenSpans, ss.Spans().At(i).SpanID())
			}
		})
		seen = seenSets{b.seenSpans, b.seenEvents}
		p.telemetry.ProcessorReplayCaseEvictions.Add(context.Background(), 1, metric.WithAttributes(attribute.String("limit", "max_spans_per_trace")))
		due = append(due, p.take(b, replaycase.ClosedSpanLimit, fmt.Sprintf("trace reached limits.max_spans_per_trace (%d); its later spans form further cases", p.cfg.Limits.MaxSpansPerTrace)))
	}
}

// seenSets are the span ids and event keys an open buffer has seen.
type seenSets struct {
	spans  map[pcommon.SpanID]spanPrint
	events map[eventKey]struct{}
}

// inheritSeen gives b, the part that continues a trace just cut at the span limit, what the
// parts before it saw: while the trace is open, a client retry of spans or events those parts
// took is a duplicate, not new telemetry to add to b (and cut into further parts) again. The
// sets keep growing with the trace; b accounts for them, the closed part still does too until
// it is sent. Caller holds mu.
func (p *caseProcessor) inheritSeen(b *traceBuffer, seen seenSets) {
	for id, print := range b.seenSpans {
		seen.spans[id] = print
	}
	for k := range b.seenEvents {
		seen.events[k] = struct{}{}
	}
	b.seenSpans, b.seenEvents = seen.spans, seen.events
	size := int64(len(seen.spans)+len(seen.events)) * memSeenItem
	b.bytes += size
	p.bytes += size
	p.openBytes += size
	p.telemetry.ProcessorReplayCaseBufferedBytes.Add(context.Background(), size)
}

// dedupeSpans removes from c the spans b already holds (a client retry delivers the same span
// twice) and remembers the rest. A different span that reuses a span id b holds is removed too,
// but counted, logged and its case quarantined (span_print.go). It returns how many of the kept
// spans are roots. Spans without a span id cannot be recognised and are kept. Caller holds mu.
func (p *caseProcessor) dedupeSpans(c *traceChunk, b *traceBuffer) (roots int) {
	dups := 0
	var reused []pcommon.SpanID
	forEachScopeSpans(c.td, func(ss ptrace.ScopeSpans) {
		ss.Spans().RemoveIf(func(sp ptrace.Span) bool {
			if id := sp.SpanID(); !id.IsEmpty() {
				print := printOf(sp)
				if was, seen := b.seenSpans[id]; seen {
					if sameSpan(was, print) {
						dups++
					} else {
						reused = append(reused, id)
					}
					return true
				}
				b.seenSpans[id] = print
			}
			if sp.ParentSpanID().IsEmpty() {
				roots++
			}
			return false
		})
	})
	if dups > 0 || len(reused) > 0 {
		c.stored = nil
	}
	if dups > 0 {
		p.telemetry.ProcessorReplayCaseDuplicates.Add(context.Background(), int64(dups), signalTraces)
	}
	if len(reused) > 0 {
		b.reusedSpanIDs += len(reused)
		p.reusedSpanIDs(c.id, reused)
	}
	return roots
}

// addEvents puts one trace's GenAI log events into its buffer, without those it already holds
// and without those past limits.max_events_per_trace (dropped, counted and logged: events
// must not close a case and push its spans into a fragment). Caller holds mu.
func (p *caseProcessor) addEvents(c *logChunk, now time.Time) {
	if !p.dropClosedEvents(c) { // every event was one a closed case of the trace held
		c.redundant = true
		return
	}
	b := p.buffer(c.id, now)
	b.fromKafka = b.fromKafka || c.fromKafka
	dups, over := 0, 0
	pdatawalk.RemoveLogRecordsIf(c.ld, func(r pdatawalk.LogRecord) bool {
		k := eventIdentity(r.Record)
		if _, seen := b.seenEvents[k]; seen {
			dups++
			return true
		}
		if b.eventCount >= p.cfg.Limits.MaxEventsPerTrace {
			over++
			return true
		}
		b.seenEvents[k] = struct{}{}
		b.eventCount++
		return false
	})
	ctx := context.Background()
	if dups > 0 {
		p.telemetry.ProcessorReplayCaseDuplicates.Add(ctx, int64(dups), signalLogs)
	}
	if over > 0 {
		b.droppedEvents += over
		p.telemetry.ProcessorReplayCaseDroppedEvents.Add(ctx, int64(over), metric.WithAttributes(attribute.String("reason", "max_events_per_trace")))
		p.dropLog.Warn("GenAI log events dropped: the trace reached limits.max_events_per_trace",
			zap.String("trace_id", traceIDText(c.id)), zap.Int("dropped", over), zap.Int("limit", p.cfg.Limits.MaxEventsPerTrace))
	}
	if dups > 0 || over > 0 {
		c.stored = nil
	}
	if c.ld.LogRecordCount() == 0 { // every event was a duplicate or past the limit
		c.redundant = true
		return
	}
	b.repaired += c.repaired
	b.masked = b.masked || c.masked
	b.live = b.live || !c.restored
	b.walKeys = append(b.walKeys, c.walKeys...)
	p.wal.hold(c.walKeys)
	p.grow(b, c.ld.LogRecordCount(), b.held.addLogs(c.ld, c.stored))
}

// grow accounts for items (spans or events) added to b, an open buffer, whose encodings take
// size bytes. Caller holds mu.
func (p *caseProcessor) grow(b *traceBuffer, items int, size int64) {
	size += int64(items) * memSeenItem
	b.bytes += size
	p.bytes += size
	p.openBytes += size
	ctx := context.Background()
	if b.fragment > 0 {
		p.telemetry.ProcessorReplayCaseLateSpans.Add(ctx, int64(items))
	}
	p.telemetry.ProcessorReplayCaseBufferedSpans.Add(ctx, int64(items))
	p.telemetry.ProcessorReplayCaseBufferedBytes.Add(ctx, size)
}

// enforceLimits closes the oldest open cases until the open-trace limit holds and the open
// buffers fit in the byte limit. A closed case stays counted in p.bytes until it is sent
// (drainIfDue sends when p.bytes is over the limit, and admit refuses requests meanwhile), so
// the byte limit is checked against the open buffers alone: against p.bytes, which closing
// does not lower, one byte over the limit closed every open case. The ids the remembered closes
// hold count too, and are forgotten, oldest first, before an open case is closed for them
// (withIDs). Memory held stays within the limit plus one request. Caller holds mu.
func (p *caseProcessor) enforceLimits(due []closing) []closing {
	for p.order.Len() > 0 {
		var limit string
		var value int64
		switch {
		case len(p.open) > p.cfg.Limits.MaxOpenTraces:
			limit, value = "max_open_traces", int64(p.cfg.Limits.MaxOpenTraces)
		case p.withIDs(p.openBytes, p.cfg.Limits.MaxBufferedBytes) > p.cfg.Limits.MaxBufferedBytes:
			limit, value = "max_buffered_bytes", p.cfg.Limits.MaxBufferedBytes
		default:
			return due
		}
		oldest := p.order.Front().Value.(*traceBuffer)
		p.telemetry.ProcessorReplayCaseEvictions.Add(context.Background(), 1, metric.WithAttributes(attribute.String("limit", limit)))
		due = append(due, p.take(oldest, replaycase.ClosedEvicted, fmt.Sprintf("closed early: limits.%s (%d) reached", limit, value)))
	}
	return due
}

// take removes b from the open set; its memory stays counted until the case is sent. Caller
// holds mu.
func (p *caseProcessor) take(b *traceBuffer, cause replaycase.CloseCause, detail string) closing {
	p.order.Remove(b.elem)
	b.elem = nil
	delete(p.open, b.id)
	p.openBytes -= b.bytes
	spans, events := p.rememberClose(b)  // what it held stays recognised (closed_spans.go)
	b.seenSpans, b.seenEvents = nil, nil // the close remembers them, within its bounds
	ctx := context.Background()
	p.telemetry.ProcessorReplayCaseOpenCases.Add(ctx, -1)
	p.telemetry.ProcessorReplayCaseBufferedSpans.Add(ctx, -int64(b.spanCount+b.eventCount))
	return closing{buf: b, cause: cause, detail: detail, spans: spans, events: events}
}

// materialize decodes a closed buffer's telemetry and accounts for it at its pdata estimate
// (memsize.go) from then until its case is sent. A buffer that cannot be decoded (or one of
// whose parts could not be encoded) is dropped, counted with reason decode_error and logged
// with its trace id, unsampled: its encoding was written by this processor, so this is a
// defect, not bad input, and the run must not vanish unseen. The dropped buffer's memory and write-ahead records are released with its batch.
func (p *caseProcessor) materialize(ctx context.Context, cl closing) (runTelemetry, bool) {
	b := cl.buf
	run, err := b.held.decode()
	if err != nil {
		p.telemetry.ProcessorReplayCaseDroppedCases.Add(ctx, 1, metric.WithAttributes(attribute.String("reason", "decode_error")))
		p.dropLog.Error("replay case dropped", zap.String("trace_id", traceIDText(b.id)), zap.Int("fragment", b.fragment),
			zap.Int("spans", b.spanCount), zap.Int("events", b.eventCount), zap.String("reason", "decode_error"), zap.Error(err))
		return runTelemetry{}, false
	}
	size := memTraces(run.spans) + memLogs(run.events)
	p.mu.Lock()
	p.bytes += size - b.bytes
	p.mu.Unlock()
	p.telemetry.ProcessorReplayCaseBufferedBytes.Add(ctx, size-b.bytes)
	b.bytes = size
	return run, true
}
