package replaycaseprocessor

import "go.opentelemetry.io/collector/pdata/pcommon"

// recentTraces remembers the last n closes of traces, so that a span arriving after its case
// closed is recognised as late, and what each closed case held (closed_spans.go), so that a
// span or event sent again after the close is recognised as a duplicate. Memory is bounded by n
// closes and, for what the cases held, by a byte budget.
type recentTraces struct {
	n     uint64        // closes remembered
	ring  []recentClose // close k is at ring[k % n]; grows to n as closes come, so an idle processor holds none
	total uint64        // closes added
	// closes are the remembered closes of each trace, oldest first: the ordinal of its next
	// fragment is their number.
	closes map[pcommon.TraceID][]uint64
	held   heldIDs // the budget of the ids the closed cases held
}

// recentClose is one remembered close.
type recentClose struct {
	id     pcommon.TraceID
	spans  []pcommon.SpanID // sorted; nil once forgotten
	events []eventKey       // sorted; nil once forgotten
}

// newRecentTraces remembers n closes and, for them, at most budget bytes of ids, reported to
// report.
func newRecentTraces(n int, budget int64, report idsTelemetry) *recentTraces {
	return &recentTraces{n: uint64(max(n, 1)), closes: map[pcommon.TraceID][]uint64{}, held: heldIDs{budget: budget, report: report}}
}

// add remembers a close of trace id whose case held spans and events (sorted, see
// closedIDsOf), forgetting the oldest close once n are remembered.
func (r *recentTraces) add(id pcommon.TraceID, spans []pcommon.SpanID, events []eventKey) {
	n := r.n
	c := recentClose{id: id, spans: spans, events: events}
	if r.total < n {
		r.ring = append(r.ring, c)
	} else {
		r.evict(r.total - n)
		r.ring[r.total%n] = c
	}
	r.closes[id] = append(r.closes[id], r.total)
	r.total++
	r.held.added(r, c)
}

// evict forgets close k, the oldest remembered.
func (r *recentTraces) evict(k uint64) {
	old := &r.ring[k%r.n]
	if rest := r.closes[old.id][1:]; len(rest) > 0 {
		r.closes[old.id] = rest
	} else {
		delete(r.closes, old.id)
	}
	r.held.forget(r, k, nil)
}

// count is how many times the trace was closed among the remembered ones: the ordinal of the
// next fragment of the trace.
func (r *recentTraces) count(id pcommon.TraceID) int { return len(r.closes[id]) }
