package replaycaseprocessor

import "go.opentelemetry.io/collector/pdata/pcommon"

// recentTraces remembers the last n closed trace ids, so that a span arriving after its case
// closed is recognised as late. Memory is bounded by n.
type recentTraces struct {
	ring []pcommon.TraceID
	next int
	set  map[pcommon.TraceID]int // id -> times present in ring
}

func newRecentTraces(n int) *recentTraces {
	return &recentTraces{ring: make([]pcommon.TraceID, 0, n), set: make(map[pcommon.TraceID]int, n)}
}

func (r *recentTraces) add(id pcommon.TraceID) {
	if len(r.ring) < cap(r.ring) {
		r.ring = append(r.ring, id)
	} else {
		old := r.ring[r.next]
		if r.set[old]--; r.set[old] <= 0 {
			delete(r.set, old)
		}
		r.ring[r.next] = id
		r.next = (r.next + 1) % len(r.ring)
	}
	r.set[id]++
}

// count is how many times the trace was closed among the remembered ones: the ordinal of the
// next fragment of the trace.
func (r *recentTraces) count(id pcommon.TraceID) int { return r.set[id] }
