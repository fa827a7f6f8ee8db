package replaycaseprocessor

import (
	"encoding/binary"
	"encoding/hex"
	"slices"
	"strings"

	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/reprise-dev/reprise/replaycase"
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
// ("" when it did not, or without select). Version 2 also carries the span ids the case held
// (closed_spans.go), so that a redelivery after a restart is recognised as a duplicate: the
// length (uvarint) and bytes of selectedBy, then 8 bytes per span id, sorted. Version 3
// (closedMarkVersion) also carries the GenAI event keys (event_identity.go), which are the
// same in every process since it: the length and bytes of selectedBy, the number of span ids
// (uvarint), 8 bytes per span id, sorted, then 16 bytes per event key, sorted. Versions 1 and 2
// are still read, without event keys (their events sent again are a late fragment, as before).
const (
	closedMarkVersion1 = 1
	closedMarkVersion2 = 2
	closedMarkVersion  = 3
)

// closedRun is a trace whose case a batch holds, to mark closed once the batch is released.
type closedRun struct {
	id         pcommon.TraceID
	selectedBy string
	spans      []pcommon.SpanID // the span ids its close remembers (closing.spans), sorted
	events     []eventKey       // the event keys its close remembers (closing.events), sorted
	// What its hand-off mark (handoff_marks.go) stores besides: how the case closed, its
	// fragment number, whether it continues a part cut at the span limit, how many of its
	// spans have no span id (the mark cannot name them) and how many of its events were dropped.
	cause         replaycase.CloseCause
	detail        string
	fragment      int
	spanLimitPart bool
	noIDSpans     int
	droppedEvents int // events dropped past limits.max_events_per_trace (a quarantine reason)
	// handedOff: a hand-off restored on start, whose mark is stored already (the buffer holds
	// its key among its records'); value: closedValue of it, encoded once for the hand-off mark
	// and stored again as its closed mark.
	handedOff bool
	value     []byte
}

// storedClose is a mark read on start.
type storedClose struct {
	key        string
	selectedBy string
	spans      []pcommon.SpanID
	events     []eventKey
}

// closedValue is a mark's value for c.
func closedValue(c closedRun) []byte {
	return appendClosedValue(make([]byte, 0, 1+2*binary.MaxVarintLen64+len(c.selectedBy)+8*len(c.spans)+len(eventKey{})*len(c.events)), c)
}

// appendClosedValue appends closedValue(c) to v.
func appendClosedValue(v []byte, c closedRun) []byte {
	v = binary.AppendUvarint(append(v, closedMarkVersion), uint64(len(c.selectedBy)))
	v = append(v, c.selectedBy...)
	v = binary.AppendUvarint(v, uint64(len(c.spans)))
	for _, id := range c.spans {
		v = append(v, id[:]...)
	}
	for _, k := range c.events {
		v = append(v, k[:]...)
	}
	return v
}

// readClosedValue reads why select kept the run and the span ids and event keys its case held
// from a mark's value (copies: the storage owns value). An unknown version or a malformed value
// gives none of them: the close is still remembered, its spans sent again are a late fragment.
func readClosedValue(value []byte) (selectedBy string, spans []pcommon.SpanID, events []eventKey) {
	switch {
	case len(value) == 0:
		return "", nil, nil
	case value[0] == closedMarkVersion1:
		return string(value[1:]), nil, nil
	case value[0] != closedMarkVersion2 && value[0] != closedMarkVersion:
		return "", nil, nil
	}
	rest := value[1:]
	size, n := binary.Uvarint(rest)
	if n <= 0 || size > uint64(len(rest)-n) {
		return "", nil, nil
	}
	selectedBy, rest = string(rest[n:n+int(size)]), rest[n+int(size):]
	nspans := uint64(len(rest) / 8) // version 2: every byte left is a span id
	if value[0] == closedMarkVersion {
		if nspans, n = binary.Uvarint(rest); n <= 0 || nspans > uint64(len(rest)-n)/8 {
			return "", nil, nil
		}
		rest = rest[n:]
	}
	spanBytes, keyBytes := rest[:8*nspans], rest[8*nspans:]
	if (value[0] == closedMarkVersion2 && len(keyBytes) != 0) || len(keyBytes)%len(eventKey{}) != 0 {
		return "", nil, nil
	}
	spans = readSorted(spanBytes, 8, func(b []byte) pcommon.SpanID { return pcommon.SpanID(b) }, compareSpanIDs)
	return selectedBy, spans, readSorted(keyBytes, len(eventKey{}), func(b []byte) eventKey { return eventKey(b) }, compareEventKeys)
}

// readSorted reads b as ids of size bytes each, sorted (nil when b is empty), in a slice sized
// as closedIDsOf sizes them. Sorted when written; sorted again so that a mark not written by
// this code cannot make a lookup miss.
func readSorted[K any](b []byte, size int, id func([]byte) K, compare func(a, b K) int) []K {
	if len(b) == 0 {
		return nil
	}
	ids := slices.Grow([]K(nil), len(b)/size)
	for ; len(b) > 0; b = b[size:] {
		ids = append(ids, id(b[:size]))
	}
	slices.SortFunc(ids, compare)
	return ids
}

// closedMark is one stored close.
type closedMark struct {
	seq uint64
	id  pcommon.TraceID
}

func (m closedMark) key() string { return m.keyAt(closedPrefix) }

// keyAt is the key of the mark under prefix, "<prefix><sequence, 16 hex digits>/<trace id hex>"
// (hand-off marks share the layout, handoff_marks.go).
func (m closedMark) keyAt(prefix string) string {
	k := make([]byte, 0, len(prefix)+16+1+2*len(m.id))
	k = append(k, prefix...)
	k = hex.AppendEncode(k, binary.BigEndian.AppendUint64(make([]byte, 0, 8), m.seq))
	k = append(k, '/')
	k = hex.AppendEncode(k, m.id[:])
	return string(k)
}

// parseClosedKey reads a mark's key; ok is false for any other key.
func parseClosedKey(key string) (m closedMark, ok bool) { return parseMarkKey(closedPrefix, key) }

// parseMarkKey reads a key of keyAt's layout under prefix; ok is false for any other key.
func parseMarkKey(prefix, key string) (m closedMark, ok bool) {
	rest, ok := strings.CutPrefix(key, prefix)
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
//
// The ids the marks hold are bounded as the memory's are (closed_spans.go): at most budget
// bytes (limits.max_buffered_bytes / closedIDsShare) of span ids and event keys in all. Past it
// the oldest marks that hold ids are written again without them, in the transaction that
// stores the new one: the ids the memory forgets first. A mark whose ids alone exceed the
// budget is stored without them. So storage holds at most the budget of ids plus the marks'
// keys and headers, whatever the size of the runs.
type closedMarks struct {
	n    int // the ring's size once full
	ring []storedMark
	next int
	// stale are the keys of marks to delete with the next transaction that stores marks: the
	// ones beyond n when they were read on start (limits.max_open_traces lowered) or unreadable.
	stale []string
	// bytes are the ids the marks hold, at most budget once a transaction stored marks;
	// stripped is how many of the oldest marks (in ring order) strip went past: none of them
	// holds ids any more.
	budget, bytes int64
	stripped      int
	report        idsTelemetry // the ids strip drops
}

// storedMark is a mark in the window, with what is needed to write it again without ids.
type storedMark struct {
	closedMark
	selectedBy string
	ids        idCount // the span ids and event keys its value holds
}

// newClosedMarks allocates nothing for n (limits.max_open_traces): the ring grows as closes
// come, so a large limit costs no memory up front, as in newRecentSelections.
func newClosedMarks(n int, budget int64, report idsTelemetry) *closedMarks {
	return &closedMarks{n: max(n, 1), budget: budget, report: report}
}

// add remembers m and returns the mark it replaces, if the ring was full.
func (c *closedMarks) add(m storedMark) (old storedMark, full bool) {
	c.bytes += m.ids.bytes()
	if len(c.ring) < c.n {
		c.ring = append(c.ring, m)
		return storedMark{}, false
	}
	old = c.ring[c.next]
	c.ring[c.next] = m
	c.next = (c.next + 1) % len(c.ring)
	c.bytes -= old.ids.bytes()
	c.stripped = max(c.stripped-1, 0)
	return old, true
}

// strip returns the operations that write the oldest marks holding ids again without them,
// while the marks' ids exceed the budget.
func (c *closedMarks) strip(ops []*storage.Operation) []*storage.Operation {
	for c.bytes > c.budget && c.stripped < len(c.ring) {
		m := &c.ring[(c.next+c.stripped)%len(c.ring)] // the oldest not stripped
		if m.ids != (idCount{}) {
			ops = append(ops, storage.SetOperation(m.key(), closedValue(closedRun{selectedBy: m.selectedBy})))
			c.bytes -= m.ids.bytes()
			c.report.forgotten(m.ids, forgottenOnDisk)
			m.ids = idCount{}
		}
		c.stripped++
	}
	return ops
}

// closeOps returns the operations that store a mark for each trace closed, delete the marks
// they push out of the window and strip the oldest marks of their ids past the budget. Caller
// holds w.mu.
func (w *wal) closeOps(ops []*storage.Operation, closed []closedRun) []*storage.Operation {
	for _, c := range closed {
		w.seq++
		m := storedMark{closedMark: closedMark{seq: w.seq, id: c.id}, selectedBy: c.selectedBy, ids: idCountOf(c.spans, c.events)}
		if m.ids.bytes() > w.closed.budget { // the memory forgets them at once too (heldIDs.added)
			w.closed.report.forgotten(m.ids, forgottenOnDisk)
			c.spans, c.events, m.ids = nil, nil, idCount{}
		}
		value := c.value
		if value == nil || m.ids == (idCount{}) {
			value = closedValue(c)
		}
		ops = append(ops, storage.SetOperation(m.key(), value))
		if old, full := w.closed.add(m); full {
			ops = append(ops, storage.DeleteOperation(old.key()))
		}
	}
	if len(closed) > 0 {
		ops = w.closed.strip(ops)
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
//
// The hand-off marks (handoff_marks.go, oldest first) are remembered among them in the order
// of their sequence numbers, as closes.
func (p *caseProcessor) restoreCloses(closes []storedClose, handoffs []storedHandoff) {
	w := p.wal
	p.mu.Lock() // p.mu before w.mu, as buffering takes them
	defer p.mu.Unlock()
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(handoffs) > 0 {
		p.handedOff = map[pcommon.TraceID][]*handedOff{}
	}
	for _, c := range closes {
		m, ok := parseClosedKey(c.key)
		if !ok {
			w.closed.stale = append(w.closed.stale, c.key)
			continue
		}
		for ; len(handoffs) > 0 && handoffs[0].mark.seq < m.seq; handoffs = handoffs[1:] {
			p.rememberHandoff(handoffs[0])
		}
		if old, full := w.closed.add(storedMark{closedMark: m, selectedBy: c.selectedBy, ids: idCountOf(c.spans, c.events)}); full {
			w.closed.stale = append(w.closed.stale, old.key())
		}
		p.closed.add(m.id, c.spans, c.events)
		if p.selector != nil && c.selectedBy != "" {
			p.selector.recent.add(m.id, c.selectedBy)
		}
	}
	for _, h := range handoffs {
		p.rememberHandoff(h)
	}
}
