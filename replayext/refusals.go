package replayext

import (
	"sync"

	"go.opentelemetry.io/collector/component"
)

// refusals is the server's log of the requests it refused, whatever their session. A client
// that swallows a refusal and carries on leaves no other trace of the call the recording never
// had, and a request without X-Replay-Session or traceparent is its own fresh session, whose
// log nobody can read back: `reprise ci`, which runs one replay server per run, reads this
// one (Refusals). It keeps the first maxDivergencesPerSession refusals, where the run left the
// recording, and counts the rest.
type refusals struct {
	mu    sync.Mutex
	first []Divergence
	total int
}

func (l *refusals) add(d Divergence) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.total++
	if len(l.first) < maxDivergencesPerSession {
		l.first = append(l.first, d)
	}
}

// Refusals are the requests the replay extension ext refused since it started (the first
// ones, in order) and how many it refused in all; ok is false when ext is not a replay
// extension.
func Refusals(ext component.Component) (first []Divergence, total int, ok bool) {
	r, ok := ext.(*replay)
	if !ok {
		return nil, 0, false
	}
	r.refusals.mu.Lock()
	defer r.refusals.mu.Unlock()
	return append([]Divergence{}, r.refusals.first...), r.refusals.total, true
}

// refuse logs a request that lookup refused, d saying where it left the recording, in the
// session's divergence log and the server's refusal log (see refusals).
func (r *replay) refuse(id string, d Divergence) {
	d.Refused, d.Live, d.Served = true, false, ""
	r.sessions.with(id, func(ses *session) { ses.diverged(d) })
	r.refusals.add(d)
}
