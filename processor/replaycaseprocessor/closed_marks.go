package replaycaseprocessor

import (
	"encoding/binary"
	"encoding/hex"
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

// closedMarkVersion is a mark value's first byte; the rest is why select kept the run ("" when
// it did not, or without select).
const closedMarkVersion = 1

// closedRun is a trace whose case a batch holds, to mark closed once the batch is released.
type closedRun struct {
	id         pcommon.TraceID
	selectedBy string
}

// storedClose is a mark read on start.
type storedClose struct {
	key        string
	selectedBy string
}

// readClosedValue reads why select kept the run from a mark's value; "" for an unknown version.
func readClosedValue(value []byte) string {
	if len(value) == 0 || value[0] != closedMarkVersion {
		return ""
	}
	return string(value[1:]) // a copy: the storage owns value
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
		ops = append(ops, storage.SetOperation(m.key(), append([]byte{closedMarkVersion}, c.selectedBy...)))
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
		p.closed.add(m.id)
		if p.selector != nil && c.selectedBy != "" {
			p.selector.recent.add(m.id, c.selectedBy)
		}
	}
}
