package replaycaseprocessor

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"
)

// A trace cut at limits.max_spans_per_trace shares the write-ahead record of the request that
// was cut between the part closed and the part that continues it: the record is deleted only
// once the last part holding it is sent. A crash between the two sends would restore the whole
// record, and the spans of the part already written would come again, in a new first part
// under that part's case_id: two rows with one case_id and different spans.
//
// So when a part closed at the limit is released (sent, or dropped for good), a resume mark
// is stored in the same transaction that deletes the records only that part held: kind "p" in
// the record key layout (wal.go), its value what restore needs to go on where the part left
// off (the fragment number of the part that continues, whether the trace's root was seen, and
// the ids of the cut request's spans already sent). The part that continues holds the mark like
// a record, so it is deleted when that part is sent. Restore reads the marks first, leaves out
// the spans a mark names, and opens the trace's buffer as the part the mark continues; its
// case then has the case_id it would have had without the crash.

// walMarker is a resume mark to store when the part that carries it is released.
type walMarker struct {
	key      string
	fragment int // the fragment number of the part that continues
	rootSeen bool
	sent     []pcommon.SpanID // the cut request's spans in this part and the parts before it
	// selectedBy is why select kept the run (select.go), set when the part is built: after a
	// restart the part that continues is kept for the same reason, as the parts of a run are
	// without one, instead of being judged on its own spans alone.
	selectedBy string
}

// value is the mark as stored.
func (m *walMarker) value() []byte {
	return encodeMarker(m.fragment, m.rootSeen, m.selectedBy, m.sent)
}

// resumePoint is what restore read from the resume marks of one trace.
type resumePoint struct {
	// fragment is the fragment number of the part that continues, less the closes of the trace
	// the restored memory of closes (p.closed) holds: added to p.closed.count, it numbers the
	// trace's buffers opened after the restart.
	fragment   int
	rootSeen   bool
	selectedBy string // why select kept the run; "" when it did not, or without select
	sent       map[pcommon.SpanID]struct{}
	keys       []string // the marks: held by the trace's first restored buffer
	held       bool
}

// Versions of a mark's value (its first byte). Version 1 marks, written before the selection
// was kept, are still read.
const (
	markerVersion1 = 1
	markerVersion  = 2
)

// encodeMarker writes a mark's value: the version, the fragment number (uvarint), 1 when the
// root was seen, the length (uvarint) and bytes of selectedBy, then 8 bytes per span id.
func encodeMarker(fragment int, rootSeen bool, selectedBy string, sent []pcommon.SpanID) []byte {
	v := binary.AppendUvarint([]byte{markerVersion}, uint64(fragment))
	root := byte(0)
	if rootSeen {
		root = 1
	}
	v = append(v, root)
	v = binary.AppendUvarint(v, uint64(len(selectedBy)))
	v = append(v, selectedBy...)
	for _, id := range sent {
		v = append(v, id[:]...)
	}
	return v
}

// decodeMarker reads a mark's value into r, adding to what earlier marks of the trace gave.
func decodeMarker(value []byte, r *resumePoint) error {
	if len(value) == 0 || (value[0] != markerVersion1 && value[0] != markerVersion) {
		return errors.New("unknown resume mark version")
	}
	fragment, n := binary.Uvarint(value[1:])
	if n <= 0 || fragment > 1<<31 {
		return errors.New("bad fragment number in resume mark")
	}
	rest := value[1+n:]
	if len(rest) == 0 || rest[0] > 1 {
		return errors.New("bad resume mark")
	}
	root, ids, by := rest[0] == 1, rest[1:], ""
	if value[0] == markerVersion {
		size, n := binary.Uvarint(ids)
		if n <= 0 || size > uint64(len(ids)-n) {
			return errors.New("bad selection in resume mark")
		}
		by, ids = string(ids[n:n+int(size)]), ids[n+int(size):]
	}
	if len(ids)%8 != 0 {
		return errors.New("bad resume mark")
	}
	r.fragment = max(r.fragment, int(fragment))
	r.rootSeen = r.rootSeen || root
	if by != "" {
		r.selectedBy = by
	}
	for ; len(ids) > 0; ids = ids[8:] {
		r.sent[pcommon.SpanID(ids[:8])] = struct{}{}
	}
	return nil
}

// markerTrace reads the trace id of a resume mark's key.
func markerTrace(key string) (pcommon.TraceID, bool) {
	var id pcommon.TraceID
	i := strings.LastIndexByte(key, '/')
	if i < 0 || hex.DecodedLen(len(key)-i-1) != len(id) {
		return id, false
	}
	_, err := hex.Decode(id[:], []byte(key[i+1:]))
	return id, err == nil
}

// markContinuation records, when part prev of a trace closed at the span limit and next
// continues it, the mark to store when prev is released; next holds it. sent are the ids of
// the cut request's spans in prev and the parts before it. Caller holds mu.
func (p *caseProcessor) markContinuation(prev, next *traceBuffer, sent []pcommon.SpanID) {
	if p.wal == nil {
		return
	}
	key := p.wal.key('p', next.id, false)
	prev.marker = &walMarker{key: key, fragment: next.fragment, rootSeen: next.rootSeen, sent: sent}
	next.walKeys = append(next.walKeys, key)
	p.wal.hold([]string{key})
}

// appendSpanIDs appends the ids of td's spans to ids.
func appendSpanIDs(ids []pcommon.SpanID, td ptrace.Traces) []pcommon.SpanID {
	forEachScopeSpans(td, func(ss ptrace.ScopeSpans) {
		for i := 0; i < ss.Spans().Len(); i++ {
			ids = append(ids, ss.Spans().At(i).SpanID())
		}
	})
	return ids
}

// resume makes b, a trace's buffer opened while restoring or after, the part a resume mark
// continues. Caller holds mu.
func (p *caseProcessor) resume(b *traceBuffer) {
	r, ok := p.resumed[b.id]
	if !ok {
		return
	}
	// Later parts of the trace go on numbering from the mark's, so no later part takes the
	// case_id of one sent before the restart.
	b.fragment += r.fragment
	if r.held {
		return
	}
	r.held = true
	b.spanLimitPart, b.rootSeen = true, r.rootSeen
	// The spans sent in the parts before are duplicates for this part too, as they are without
	// a restart (inheritSeen): a client retry of the cut request must not add them again.
	for id := range r.sent {
		b.seenSpans[id] = unknownPrint // the mark keeps ids only
	}
	b.walKeys = append(b.walKeys, r.keys...)
	p.wal.hold(r.keys)
}

// readResumeMarks reads every resume mark among the stored keys into p.resumed. A mark that
// cannot be read is logged and skipped: its trace's spans already sent come again.
func (p *caseProcessor) readResumeMarks(ctx context.Context, keys []string) error {
	p.resumed = map[pcommon.TraceID]*resumePoint{}
	for _, key := range keys {
		if kind, _ := currentKey(key); kind != 'p' {
			continue
		}
		value, err := p.wal.client.Get(ctx, key)
		if err != nil {
			return fmt.Errorf("storage: reading stored telemetry %s: %w", key, err)
		}
		id, ok := markerTrace(key)
		if value == nil || !ok {
			continue
		}
		r := p.resumed[id]
		if r == nil {
			r = &resumePoint{sent: map[pcommon.SpanID]struct{}{}}
		}
		if err := decodeMarker(value, r); err != nil {
			p.logger.Error("unreadable resume mark skipped: spans of its trace already sent may be sent again", zap.String("key", key), zap.Error(err))
			continue
		}
		r.keys = append(r.keys, key)
		p.resumed[id] = r
	}
	// The closed marks restored before (closed_marks.go) already count the closes of the parts
	// sent, which are in p.closed; a mark's fragment number counts every part before it. So a
	// trace's later buffers are numbered from p.closed plus what it does not remember (marks
	// written before closes were stored, or closes it has forgotten): otherwise the part that
	// continues would count the parts sent twice and take a case_id no run without a restart has.
	for id, r := range p.resumed {
		r.fragment = max(r.fragment-p.closed.count(id), 0)
	}
	if p.selector != nil {
		for id, r := range p.resumed {
			if r.selectedBy != "" {
				p.selector.recent.add(id, r.selectedBy) // what selectRun asks for a later part
			}
		}
	}
	return nil
}

// leaveOutSent removes from restored chunks the spans that a resume mark says were sent, and
// returns the chunks left with spans.
func (p *caseProcessor) leaveOutSent(chunks []*traceChunk) []*traceChunk {
	kept := chunks[:0]
	for _, c := range chunks {
		if r, ok := p.resumed[c.id]; ok && len(r.sent) > 0 {
			forEachScopeSpans(c.td, func(ss ptrace.ScopeSpans) {
				ss.Spans().RemoveIf(func(sp ptrace.Span) bool {
					_, sent := r.sent[sp.SpanID()]
					if sent {
						c.stored = nil
					}
					return sent
				})
			})
		}
		if c.td.SpanCount() > 0 {
			kept = append(kept, c)
		}
	}
	return kept
}

// unheldMarks are the resume marks no restored buffer took (no record of their trace was
// left): the caller deletes them. It ends the restore, so it also forgets the ids of the spans
// sent: restore has left them out of the records and the buffers that continue the traces hold
// them; kept, they would stay in memory, not counted in max_buffered_bytes, as long as the
// process runs (a part of the default 5,000 spans names up to 40 kB of them).
func (p *caseProcessor) unheldMarks() []string {
	var keys []string
	for _, r := range p.resumed {
		if !r.held {
			keys = append(keys, r.keys...)
		}
		r.sent = nil
	}
	return keys
}
