package replaycaseprocessor

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sort"

	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"

	"github.com/reprise-dev/reprise/internal/pdatawalk"
	"github.com/reprise-dev/reprise/replaycase"
)

// A closed case's records are deleted, and its closed mark stored, only once the next consumer
// took it (wal.release). A process killed after the exporter wrote the case and before that
// transaction restarted with the records and no mark, and restore rebuilt the trace as an open
// case: a span of the trace arriving after the restart joined it, and when that span changed
// the case_id (the root of a case closed without it by idle_timeout or max_age) the run became
// two rows with different case_ids sharing the spans written before the kill
// (TestACaseKilledInItsHandOffComesBackClosed; FuzzEveryRunEndsInOnePlace, 21c7eb13d787ec6f).
//
// So before a batch is offered to the next consumer, a hand-off mark per case (every run of
// the batch with a trace id: cases, runs passed on unchanged, runs not selected) is stored, in
// one transaction a batch (wal.commit, shared with concurrent callers), with the resume marks
// of the parts the batch closed at the span limit (span_limit_resume.go). The marks are deleted
// in the release transaction that stores the closed marks: a case is always either handed off
// or marked closed, never neither. A batch offered again after a refusal has its marks already.
//
// Key: "handoff/<sequence, 16 hex digits>/<trace id hex>", the closed marks' layout (keyAt),
// outside "wal/" and "closed/" so that a build before the marks skips it. Value: the version
// (handoffMarkVersion), the fragment number (uvarint), a flags byte (1: the case continues a
// part cut at the span limit), the number of its spans without a span id and of its events
// dropped past limits.max_events_per_trace (uvarints), the length (uvarint) and bytes of the
// close cause, of its detail, then the closed mark's value of the
// case (closedValue: why select kept it, its span ids and event keys), which its closed mark
// stores again at the release.
//
// On start, the marks are read with the closed marks, oldest first, into the memory of closes
// (the close is remembered as if it had been released). Then, as the records are replayed, the
// spans and events a mark names (and as many spans without an id as it counts) are taken out of
// them into the closed case the mark describes (same fragment, cause and detail, so the same
// case_id; Resent as any restored case), which is sent at the end of the restore before anything
// else. What the records hold beyond that, and everything arriving after the restart, meets the
// remembered close: a duplicate of what the case held, or a late fragment. A mark whose trace
// has no record left, or that a later closed mark of its trace follows (an older build released
// the case), is deleted without being remembered; one that got nothing from the records is
// stored as the closed mark it would have become.

const (
	handoffPrefix      = "handoff/"
	handoffMarkVersion = 1
	handoffSpanLimit   = 1 // flags: the case continues a part cut at the span limit
)

// handoffValue is the hand-off mark's value of c. c.value becomes its closed mark's value, a
// slice of the same bytes.
func handoffValue(c *closedRun) []byte {
	size := 1 + 4*binary.MaxVarintLen64 + 1 + len(c.cause) + len(c.detail) +
		2*binary.MaxVarintLen64 + 1 + len(c.selectedBy) + 8*len(c.spans) + len(eventKey{})*len(c.events)
	v := binary.AppendUvarint(append(make([]byte, 0, size), handoffMarkVersion), uint64(c.fragment))
	flags := byte(0)
	if c.spanLimitPart {
		flags |= handoffSpanLimit
	}
	v = binary.AppendUvarint(binary.AppendUvarint(append(v, flags), uint64(c.noIDSpans)), uint64(c.droppedEvents))
	v = append(binary.AppendUvarint(v, uint64(len(c.cause))), c.cause...)
	v = append(binary.AppendUvarint(v, uint64(len(c.detail))), c.detail...)
	header := len(v)
	v = appendClosedValue(v, *c)
	c.value = v[header:len(v):len(v)]
	return v
}

// readHandoffValue reads a hand-off mark's value into c (copies: the storage owns value).
func readHandoffValue(value []byte, c *closedRun) error {
	if len(value) == 0 || value[0] != handoffMarkVersion {
		return errors.New("unknown hand-off mark version")
	}
	rest := value[1:]
	uvarint := func() uint64 {
		x, n := binary.Uvarint(rest)
		if n <= 0 {
			rest = nil
			return 1 << 62
		}
		rest = rest[n:]
		return x
	}
	text := func() string {
		size := uvarint()
		if size > uint64(len(rest)) {
			rest = nil
			return ""
		}
		s := string(rest[:size])
		rest = rest[size:]
		return s
	}
	fragment := uvarint()
	if fragment > 1<<31 || len(rest) == 0 {
		return errors.New("bad fragment number in hand-off mark")
	}
	flags := rest[0]
	rest = rest[1:]
	noID, dropped := uvarint(), uvarint()
	cause, detail := text(), text()
	if noID > 1<<31 || dropped > 1<<31 || rest == nil || len(rest) == 0 || rest[0] != closedMarkVersion {
		return errors.New("bad hand-off mark")
	}
	c.fragment, c.spanLimitPart, c.noIDSpans, c.droppedEvents = int(fragment), flags&handoffSpanLimit != 0, int(noID), int(dropped)
	c.cause, c.detail = replaycase.CloseCause(cause), detail
	c.selectedBy, c.spans, c.events = readClosedValue(rest)
	return nil
}

// storedHandoff is a hand-off mark read on start.
type storedHandoff struct {
	key  string
	mark closedMark
	run  closedRun
	err  error // unreadable: deleted, its trace restored as before the marks
}

// handOff stores the hand-off marks of b's runs and the resume marks of the parts it closed at
// the span limit, in one transaction, unless they are stored already (b was offered before).
func (w *wal) handOff(ctx context.Context, b *batch) error {
	if w == nil || b.handoff != nil || len(b.closed) == 0 {
		return nil
	}
	keys := make([]string, 0, len(b.closed))
	ops := make([]*storage.Operation, 0, len(b.closed)+len(b.markers))
	w.mu.Lock()
	for i := range b.closed {
		c := &b.closed[i]
		if c.handedOff { // restored from its mark, which its buffer holds
			continue
		}
		w.seq++
		key := closedMark{seq: w.seq, id: c.id}.keyAt(handoffPrefix)
		keys = append(keys, key)
		ops = append(ops, storage.SetOperation(key, handoffValue(c)))
	}
	for _, m := range b.markers {
		if w.refs[m.key] > 0 { // the part that continues holds it (as in release)
			ops = append(ops, storage.SetOperation(m.key, m.value()))
		}
	}
	w.mu.Unlock()
	if len(ops) > 0 {
		if err := w.commit.batch(ctx, ops...); err != nil {
			return fmt.Errorf("replay_case: storing the hand-off of closed cases failed; they are kept and offered again: %w", err)
		}
	}
	b.handoff = keys
	return nil
}

// spansWithoutID counts the spans of td that have no span id.
func spansWithoutID(td ptrace.Traces) int {
	n := 0
	forEachScopeSpans(td, func(ss ptrace.ScopeSpans) {
		for i := 0; i < ss.Spans().Len(); i++ {
			if ss.Spans().At(i).SpanID().IsEmpty() {
				n++
			}
		}
	})
	return n
}

// handedOff is a hand-off mark read on start and the closed case restore rebuilds from it.
type handedOff struct {
	storedHandoff
	noID int          // spans without an id it still takes
	over int          // events past the event limit it still drops (the first the records hold beyond what it names)
	buf  *traceBuffer // nil until a record gave it a span or an event
}

// liveHandoffs returns the hand-off marks restore rebuilds a case from, and deletes the others:
// unreadable ones, those whose trace has no record left, and those a later closed mark of
// their trace follows (an older build released their case and left them).
func (p *caseProcessor) liveHandoffs(ctx context.Context, keys []string, closes []storedClose, handoffs []storedHandoff) []storedHandoff {
	if len(handoffs) == 0 {
		return nil
	}
	recorded := map[string]bool{}
	for _, k := range keys {
		if kind, _ := currentKey(k); kind != 'p' {
			recorded[recordTraceID(k)] = true
		}
	}
	lastClose := map[pcommon.TraceID]uint64{}
	for _, c := range closes {
		if m, ok := parseClosedKey(c.key); ok {
			lastClose[m.id] = max(lastClose[m.id], m.seq)
		}
	}
	var stale []string
	live := handoffs[:0]
	for _, h := range handoffs {
		switch {
		case h.err != nil:
			p.logger.Warn("unreadable hand-off mark deleted: its trace is restored as if it had not been handed off", zap.String("key", h.key), zap.Error(h.err))
		case !recorded[h.mark.id.String()] || lastClose[h.mark.id] > h.mark.seq:
		default:
			live = append(live, h)
			continue
		}
		stale = append(stale, h.key)
	}
	p.wal.release(ctx, nil, nil, stale)
	return live
}

// rememberHandoff remembers the close h describes, as restoreCloses does a closed mark's, and
// makes it one of the cases restore rebuilds. Caller holds mu.
func (p *caseProcessor) rememberHandoff(h storedHandoff) {
	p.closed.add(h.mark.id, h.run.spans, h.run.events)
	if p.selector != nil && h.run.selectedBy != "" {
		p.selector.recent.add(h.mark.id, h.run.selectedBy)
	}
	p.handedOff[h.mark.id] = append(p.handedOff[h.mark.id], &handedOff{storedHandoff: h, noID: h.run.noIDSpans, over: h.run.droppedEvents})
}

// names tells whether the case h describes held span id (or, without an id, one more span
// without one).
func (h *handedOff) names(id pcommon.SpanID) bool {
	if id.IsEmpty() {
		if h.noID > 0 {
			h.noID--
			return true
		}
		return false
	}
	_, ok := slices.BinarySearchFunc(h.run.spans, id, compareSpanIDs)
	return ok
}

// buffer returns the closed case h rebuilds, which holds the chunk's record. Caller holds mu.
func (p *caseProcessor) handedOffBuffer(h *handedOff, m *chunkMeta) *traceBuffer {
	b := h.buf
	if b == nil {
		b = newTraceBuffer(h.mark.id, p.now(), h.run.fragment)
		b.spanLimitPart, b.handoffKey, b.droppedEvents = h.run.spanLimitPart, h.key, h.run.droppedEvents
		b.walKeys = []string{h.key} // deleted with its records when it is sent
		p.wal.hold(b.walKeys)
		p.account(b, memOpenBuffer)
		h.buf = b
	}
	b.fromKafka = b.fromKafka || m.fromKafka
	b.masked = b.masked || m.masked
	if len(m.walKeys) > 0 && !slices.Contains(b.walKeys, m.walKeys[0]) {
		b.walKeys = append(b.walKeys, m.walKeys...)
		p.wal.hold(m.walKeys)
	}
	return b
}

// account adds size bytes to b, a closed buffer being restored. Caller holds mu.
func (p *caseProcessor) account(b *traceBuffer, size int64) {
	b.bytes += size
	p.bytes += size
	p.telemetry.ProcessorReplayCaseBufferedBytes.Add(context.Background(), size)
}

// takeHandedOffSpans takes out of restored chunks the spans that a hand-off mark of their trace
// names, into the closed cases the marks describe. It reports whether one of those took any
// (then it holds the chunks' record).
func (p *caseProcessor) takeHandedOffSpans(chunks []*traceChunk) bool {
	return takeHandedOff(p, chunks, func(c *traceChunk, h *handedOff) bool {
		part := &traceChunk{chunkMeta: chunkMeta{id: c.id}, td: takeSpansIf(c.td, func(sp ptrace.Span) bool { return h.names(sp.SpanID()) })}
		if part.td.SpanCount() == 0 {
			return false
		}
		repaired := sanitizeTraces(part.td).repaired // as bufferTraces does the rest
		b := p.handedOffBuffer(h, &c.chunkMeta)
		b.repaired += repaired
		if p.dedupeSpans(part, b) > 0 {
			b.rootSeen = true
		}
		n := part.td.SpanCount()
		b.spanCount += n
		p.account(b, b.held.addTraces(part.td, nil)+int64(n)*memSeenItem)
		return true
	})
}

// takeHandedOffEvents is takeHandedOffSpans for GenAI log events.
func (p *caseProcessor) takeHandedOffEvents(chunks []*logChunk) bool {
	return takeHandedOff(p, chunks, func(c *logChunk, h *handedOff) bool {
		named := h.buf != nil
		part := takeLogsIf(c.ld, func(r plog.LogRecord) bool {
			if _, ok := slices.BinarySearchFunc(h.run.events, sanitizedIdentity(r), compareEventKeys); ok {
				named = true
				return true
			}
			// Events past the event limit came after the case held its limit: the first events
			// the mark does not name after one it names are those, dropped again below.
			if named && h.over > 0 {
				h.over--
				return true
			}
			return false
		})
		if part.LogRecordCount() == 0 {
			return false
		}
		repaired := sanitizeLogs(part).repaired
		b := p.handedOffBuffer(h, &c.chunkMeta)
		b.repaired += repaired
		pdatawalk.RemoveLogRecordsIf(part, func(r pdatawalk.LogRecord) bool {
			k := eventIdentity(r.Record)
			if _, ok := slices.BinarySearchFunc(h.run.events, k, compareEventKeys); !ok {
				return true // past the limit: counted and logged when it was dropped first
			}
			if _, seen := b.seenEvents[k]; seen {
				return true
			}
			b.seenEvents[k] = struct{}{}
			return false
		})
		n := part.LogRecordCount()
		b.eventCount += n
		p.account(b, b.held.addLogs(part, nil)+int64(n)*memSeenItem)
		return true
	})
}

// sanitizedIdentity is the identity of r once sanitized, as buffering keys it (the records hold
// events as received): a copy is sanitized, r is left as it is for the rest of its chunk.
func sanitizedIdentity(r plog.LogRecord) eventKey {
	ld := plog.NewLogs()
	c := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	r.CopyTo(c)
	sanitizeLogs(ld)
	return eventIdentity(c)
}

// takeHandedOff calls take for each restored chunk and each hand-off mark of its trace, under
// mu; take moves what the mark names into its case and reports whether it moved anything.
func takeHandedOff[C interface{ meta() *chunkMeta }](p *caseProcessor, chunks []C, take func(C, *handedOff) bool) (took bool) {
	if len(p.handedOff) == 0 {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range chunks {
		m := c.meta()
		for _, h := range p.handedOff[m.id] {
			if take(c, h) {
				m.stored, took = nil, true // no longer what the record holds
			}
		}
	}
	return took
}

// takeLogsIf moves the log records of ld that take accepts, in order, into a new Logs, keeping
// their resource and scope; ld keeps the others.
func takeLogsIf(ld plog.Logs, take func(plog.LogRecord) bool) plog.Logs {
	out := newLogsAppender()
	pdatawalk.RemoveLogRecordsIf(ld, func(r pdatawalk.LogRecord) bool {
		if !take(r.Record) {
			return false
		}
		r.Record.MoveTo(out.next(r))
		return true
	})
	return out.ld
}

// closeHandedOff ends the restore of the hand-offs: the closed cases rebuilt go first in the
// outbox, oldest first, and a mark that got nothing from the records (its case's records are
// gone) is stored as the closed mark it would have become. It reports whether it rebuilt a case.
func (p *caseProcessor) closeHandedOff(ctx context.Context) bool {
	if p.handedOff == nil {
		return false
	}
	var due []closing
	var gone []closedRun
	var goneKeys []string
	p.mu.Lock()
	var all []*handedOff
	for _, hs := range p.handedOff {
		all = append(all, hs...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].mark.seq < all[j].mark.seq })
	for _, h := range all {
		if h.buf == nil {
			gone, goneKeys = append(gone, h.run), append(goneKeys, h.key)
			continue
		}
		due = append(due, closing{buf: h.buf, cause: h.run.cause, detail: h.run.detail, spans: h.run.spans, events: h.run.events})
	}
	p.outbox = append(due, p.outbox...)
	p.handedOff = nil
	p.mu.Unlock()
	p.wal.release(ctx, nil, gone, goneKeys)
	if len(due) > 0 {
		p.logger.Info("restored closed cases whose hand-off to the next consumer was interrupted; they are sent again", zap.Int("cases", len(due)))
	}
	return len(due) > 0
}
