package replaycaseprocessor

import (
	"encoding/binary"
	"encoding/hex"
	"slices"
	"strings"

	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/pcommon"
)

// With storage, the memory that a trace's case closed (recentTraces) survives a restart. Without
// it, a request of a closed run delivered again after a restart (a client retrying after a
// timeout, an exporter's retry, a Kafka redelivery) was built as a first case again, under the
// first case's case_id when it held the root span: a partial row that readers keeping the last
// row of a case_id took for the run.
//
// Each close is a closed mark, "closed/<sequence, 16 hex digits>/<trace id hex>", stored when
// the case is released (sent, or dropped for good), in the transaction that deletes its records:
// no commit of its own, and a case is either still in storage (rebuilt under its own case_id) or
// marked closed, never neither. A mark's value says, with select, why the run was selected, so
// that after a restart a fragment of a selected run is kept for that reason as it is before one
// (select.go's recentSelections). The marks are the last limits.max_open_traces closes, as in
// memory: storing one beyond that deletes the oldest in the same transaction. On start they are
// read, oldest first, into the memory of closes before the records are replayed. The prefix is
// outside "wal/", so versions before the marks never read them as records.

const closedPrefix = "closed/"

// Versions of a mark's value (its first byte). Version 1: the rest is why select kept the run
// ("" when it did not, or without select). Version 2 (closedMarkVersion) also carries the span
// ids the case held (closed_spans.go), so that a redelivery after a restart is recognised as a
// duplicate: the length (uvarint) and bytes of selectedBy, then 8 bytes per span id, sorted.
// Version 1 marks are still read, without span ids.
const (
	closedMarkVersion1 = 1
	closedMarkVersion  = 2
)

// closedRun is a trace whose case a batch holds, to mark closed once the batch is released.
type closedRun struct {
	id         pcommon.TraceID
	selectedBy string
	spans      []pcommon.SpanID // the span ids its close remembers (closing.spans), sorted
}

// storedClose is a mark read on start.
type storedClose struct {
	key        string
	selectedBy string
	spans      []pcommon.SpanID
}

// closedValue is a mark's value for c.
func closedValue(c closedRun) []byte {
	v := binary.AppendUvarint([]byte{closedMarkVersion}, uint64(len(c.selectedBy)))
	v = append(v, c.selectedBy...)
	for _, id := range c.spans {
		v = append(v, id[:]...)
	}
	return v
}

// readClosedValue reads why select kept the run and the span ids its case held from a mark's
// value (copies: the storage owns value). An unknown version or a malformed value gives
// neither: the close is still remembered, its spans sent again are a late fragment.
func readClosedValue(value []byte) (selectedBy string, spans []pcommon.SpanID) {
	switch {
	case len(value) == 0:
		return "", nil
	case value[0] == closedMarkVersion1:
		return string(value[1:]), nil
	case value[0] != closedMarkVersion:
		return "", nil
	}
	size, n := binary.Uvarint(value[1:])
	rest := value[1:]
	if n <= 0 || size > uint64(len(rest)-n) || (len(rest)-n-int(size))%8 != 0 {
		return "", nil
	}
	selectedBy, rest = string(rest[n:n+int(size)]), rest[n+int(size):]
	if len(rest) == 0 {
		return selectedBy, nil
	}
	spans = slices.Grow([]pcommon.SpanID(nil), len(rest)/8) // sized as closedIDsOf sizes them
	for ; len(rest) > 0; rest = rest[8:] {
		spans = append(spans, pcommon.SpanID(rest[:8]))
	}
	// Sorted when written; sorted again so that a mark not written by this code cannot make a
	// lookup miss.
	slices.SortFunc(spans, compareSpanIDs)
	return selectedBy, spans
}

// closedMark is one stored close.
type closedMark struct {
	seq uint64
	id  pcommon.TraceID
}

func (m closedMark) key() string {
	k := make([]byte, 0, len(closedPrefix)+16+1+2*len(m.id))
	k = append(k, closedPrefix...)
	k = hex.AppendEncode(k, binary.BigEndian.AppendUint64(make([]byte, 0, 8), m.seq))
	k = append(k, '/')
	k = hex.AppendEncode(k, m.id[:])
	return string(k)
}

// parseClosedKey reads a mark's key; ok is false for any other key.
func parseClosedKey(key string) (m closedMark, ok bool) {
	rest, ok := strings.CutPrefix(key, closedPrefix)
	seq, id, found := strings.Cut(rest, "/")
	if !ok || !found || len(seq) != 16 || len(id) != 2*len(m.id) {
		return closedMark{}, false
	}
	var s [8]byte
	if _, err := hex.Decode(s[:], []byte(seq)); err != nil {
		return closedMark{}, false
	}
	if _, err := hex.Decode(m.id[:], []byte(id)); err != nil {
		return closedMark{}, false
	}
	m.seq = binary.BigEndian.Uint64(s[:])
	return m, true
}

// closedMarks are the stored marks, the last n, oldest first from next. Guarded by wal.mu.
type closedMarks struct {
	ring []closedMark
	next int
	// stale are the keys of marks to delete with the next transaction that stores marks: the
	// ones beyond n when they were read on start (limits.max_open_traces lowered) or unreadable.
	stale []string
}

func newClosedMarks(n int) *closedMarks {
	return &closedMarks{ring: make([]closedMark, 0, max(n, 1))}
}

// add remembers m and returns the mark it replaces, if the ring was full.
func (c *closedMarks) add(m closedMark) (old closedMark, full bool) {
	if len(c.ring) < cap(c.ring) {
		c.ring = append(c.ring, m)
		return closedMark{}, false
	}
	old = c.ring[c.next]
	c.ring[c.next] = m
	c.next = (c.next + 1) % len(c.ring)
	return old, true
}

// closeOps returns the operations that store a mark for each trace closed and delete the marks
// they push out of the window. Caller holds w.mu.
func (w *wal) closeOps(ops []*storage.Operation, closed []closedRun) []*storage.Operation {
	for _, c := range closed {
		w.seq++
		m := closedMark{seq: w.seq, id: c.id}
		ops = append(ops, storage.SetOperation(m.key(), closedValue(c)))
		if old, full := w.closed.add(m); full {
			ops = append(ops, storage.DeleteOperation(old.key()))
		}
	}
	if len(closed) > 0 {
		for _, k := range w.closed.stale {
			ops = append(ops, storage.DeleteOperation(k))
		}
		w.closed.stale = nil
	}
	return ops
}

// restoreCloses reads the stored marks (keys sorted, so oldest first) into the wal's window and
// into the processor's memory of closes. It runs before the records are replayed, so that a
// record of a trace whose case was sent is restored as the fragment it was, and before the
// resume marks are read (readResumeMarks counts on it).
func (p *caseProcessor) restoreCloses(closes []storedClose) {
	w := p.wal
	p.mu.Lock() // p.mu before w.mu, as buffering takes them
	defer p.mu.Unlock()
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, c := range closes {
		m, ok := parseClosedKey(c.key)
		if !ok {
			w.closed.stale = append(w.closed.stale, c.key)
			continue
		}
		if old, full := w.closed.add(m); full {
			w.closed.stale = append(w.closed.stale, old.key())
		}
		p.closed.add(m.id, c.spans, nil) // event keys are per process: not stored
		if p.selector != nil && c.selectedBy != "" {
			p.selector.recent.add(m.id, c.selectedBy)
		}
	}
}
