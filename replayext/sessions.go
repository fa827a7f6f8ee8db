package replayext

import (
	"container/list"
	"sync"
	"time"
)

// sessions keeps the replay state of each session (see sessionOf) in a bounded, segmented
// LRU with idle expiry. A session enters the probation segment on its first request and moves
// to the protected segment on its second, so a flood of one-request sessions only churns
// probation and cannot evict a session that is replaying a run; the least recently used
// session of a full segment is evicted, and a session idle for longer than the idle timeout
// is forgotten.
type sessions struct {
	mu                         sync.Mutex
	byID                       map[string]*list.Element // of *session
	probation                  *list.List               // one request so far, most recent first
	protected                  *list.List               // two or more requests, most recent first
	maxProbation, maxProtected int
	idle                       time.Duration
	now                        func() time.Time
	// Telemetry hooks, called with mu held.
	created func()
	evicted func(reason string)
}

// Eviction reasons, as reported in telemetry.
const (
	evictedCapacity = "capacity"
	evictedIdle     = "idle"
)

// session is the replay state of one session. Its fields are guarded by sessions.mu.
type session struct {
	id        string
	protected bool
	lastUsed  time.Time
	// served counts, per exact request, how many of its identical recordings were served.
	served smallMap[cursorKey, int]
	// last is the position of the item served last, per case and stream.
	last smallMap[cursorKey, int]
	// lastCase is the case served last, per stream: where lenient replay continues when the
	// request names no case.
	lastCase smallMap[string, string]
	// divs are the session's first divergences, divTotal counts them all (see diverged).
	divs     []Divergence
	divTotal int
	// live is set at a hybrid session's first miss: its later model calls are answered by the
	// upstream. liveFrom is the case it diverged from ("" when none was recorded).
	live     bool
	liveFrom string
}

// cursorKey is the one key of replay cursors within a session: the scope (a case id, or ""
// for requests that name none), the stream of recorded items (chat, tool:NAME, retrieval) and,
// for exact-match cursors, the key of the request (its call-site id or canonical form).
type cursorKey struct {
	scope, stream, request string
}

// maxDivergencesPerSession bounds a session's divergence log: past it, divergences are counted,
// not kept.
const maxDivergencesPerSession = 1000

// newSessions holds at most capacity sessions: half for sessions seen once, half for the rest.
func newSessions(capacity int, idle time.Duration, now func() time.Time) *sessions {
	probation := capacity / 2
	return &sessions{
		byID: map[string]*list.Element{}, probation: list.New(), protected: list.New(),
		maxProbation: max(probation, 1), maxProtected: max(capacity-probation, 1), idle: idle, now: now,
		created: func() {}, evicted: func(string) {},
	}
}

// with runs fn on the session id (creating it when new or expired) under the lock.
func (s *sessions) with(id string, fn func(*session)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	s.expire(now)
	var ses *session
	if e, ok := s.byID[id]; ok {
		ses = e.Value.(*session)
		if !ses.protected {
			s.probation.Remove(e)
			ses.protected = true
			s.byID[id] = s.protected.PushFront(ses)
			s.trim(s.protected, s.maxProtected)
		} else {
			s.protected.MoveToFront(e)
		}
	} else {
		ses = &session{id: id}
		s.byID[id] = s.probation.PushFront(ses)
		s.created()
		s.trim(s.probation, s.maxProbation)
	}
	ses.lastUsed = now
	fn(ses)
}

// peek runs fn on an existing session without counting it as use; false when there is none.
func (s *sessions) peek(id string, fn func(*session)) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expire(s.now())
	e, ok := s.byID[id]
	if ok {
		fn(e.Value.(*session))
	}
	return ok
}

// trim evicts the least recently used sessions of l beyond limit.
func (s *sessions) trim(l *list.List, limit int) {
	for l.Len() > limit {
		s.remove(l, l.Back(), evictedCapacity)
	}
}

// expire forgets the sessions idle for longer than the idle timeout. Both lists are in
// recency order, so it only looks at their tails.
func (s *sessions) expire(now time.Time) {
	for _, l := range []*list.List{s.probation, s.protected} {
		for e := l.Back(); e != nil && now.Sub(e.Value.(*session).lastUsed) > s.idle; e = l.Back() {
			s.remove(l, e, evictedIdle)
		}
	}
}

func (s *sessions) remove(l *list.List, e *list.Element, reason string) {
	delete(s.byID, e.Value.(*session).id)
	l.Remove(e)
	s.evicted(reason)
}

// len is the number of sessions held.
func (s *sessions) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.byID)
}

// next returns which of n identical recordings to serve for an exact request, in recorded
// order. Past the last one it returns the last, with fresh false: the session has been
// served every recording of the request, and serving one again is not replay (lookup
// treats it by the mode: refused, served as a divergence, or live). The count of what was
// served is bounded by all the request's recordings (bound: n, or more when the session may
// be served those of one case only, followed), so that a repeat counted while the run
// followed one case is still counted when it follows another.
func (ses *session) next(k cursorKey, n, bound int) (i int, fresh bool) {
	i = ses.served.value(k)
	ses.served.set(k, min(i+1, bound)) // bounded: a loop of repeats does not count on for ever
	return min(i, n-1), i < n
}

// after is the position after the item served last in k's case and stream (0 when none was).
func (ses *session) after(k cursorKey) int {
	if pos, ok := ses.last.get(k); ok {
		return pos + 1
	}
	return 0
}

// diverged logs d. The first divergences are kept, as the server's refusals are: the first is
// where the run left the recording. The later ones are counted, so that a client that marks
// what it read by a count sees that the log grew even when it is full; dropping the oldest
// left its length at the bound.
func (ses *session) diverged(d Divergence) {
	ses.divTotal++
	if len(ses.divs) < maxDivergencesPerSession {
		ses.divs = append(ses.divs, d)
	}
}
