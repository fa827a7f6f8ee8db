package replayext

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func TestCursorsServeIdenticalRecordingsInOrderPerSession(t *testing.T) {
	s := newSessions(10, time.Minute, time.Now)
	k := cursorKey{"case", "chat", "cs_1"}
	var got []int
	var fresh []bool
	for range 4 {
		s.with("a", func(ses *session) {
			i, f := ses.next(k, 3, 3)
			got, fresh = append(got, i), append(fresh, f)
		})
	}
	assert.Equal(t, []int{0, 1, 2, 2}, got, "past the last recording, the last")
	assert.Equal(t, []bool{true, true, true, false}, fresh, "a repeat is told apart (lookup makes it a divergence)")
	s.with("b", func(ses *session) {
		i, f := ses.next(k, 3, 3)
		assert.True(t, i == 0 && f, "another session starts afresh")
	})

	pos := cursorKey{"case", "chat", ""}
	s.with("a", func(ses *session) {
		assert.Equal(t, 0, ses.after(pos))
		ses.last.set(pos, 4)
		assert.Equal(t, 5, ses.after(pos))
	})
}

// A flood of sessions seen once evicts only sessions seen once: a session that made two
// requests survives any number of new sessions.
func TestFloodEvictsTheFloodNotActiveSessions(t *testing.T) {
	s := newSessions(100, time.Hour, time.Now)
	var evicted int
	s.evicted = func(reason string) {
		assert.Equal(t, evictedCapacity, reason)
		evicted++
	}
	k := cursorKey{"c", "chat", "cs"}
	for _, id := range []string{"active-1", "active-2"} {
		s.with(id, func(ses *session) { nextPos(ses, k, 5) })
		s.with(id, func(ses *session) { nextPos(ses, k, 5) })
	}
	for i := range 100_000 {
		s.with(fmt.Sprintf("flood-%d", i), func(*session) {})
	}
	assert.Equal(t, 100_000-50, evicted)
	assert.Equal(t, 52, s.len())
	for _, id := range []string{"active-1", "active-2"} {
		s.with(id, func(ses *session) { assert.Equal(t, 2, nextPos(ses, k, 5), "%s kept its cursor", id) })
	}
}

func TestIdleSessionsExpire(t *testing.T) {
	clock := &fakeClock{time.Unix(1_700_000_000, 0)}
	s := newSessions(100, time.Minute, clock.now)
	var reasons []string
	s.evicted = func(r string) { reasons = append(reasons, r) }
	k := cursorKey{"c", "chat", "cs"}
	s.with("old", func(ses *session) { nextPos(ses, k, 5) })
	s.with("old", func(ses *session) { nextPos(ses, k, 5) })
	clock.t = clock.t.Add(30 * time.Second)
	s.with("recent", func(ses *session) { nextPos(ses, k, 5) })
	clock.t = clock.t.Add(45 * time.Second)
	assert.False(t, s.peek("old", func(*session) {}), "idle for 75 s")
	assert.True(t, s.peek("recent", func(*session) {}), "idle for 45 s")
	assert.Equal(t, []string{evictedIdle}, reasons)
	s.with("old", func(ses *session) { assert.Equal(t, 0, nextPos(ses, k, 5), "an expired session starts afresh") })
}

func TestSessionsUnderConcurrentUse(t *testing.T) {
	s := newSessions(64, time.Hour, time.Now)
	k := cursorKey{"c", "chat", "cs"}
	var wg sync.WaitGroup
	for c := range 8 { // two requests each: the clients are replaying
		wg.Go(func() {
			for i := range 2 {
				s.with(fmt.Sprintf("client-%d", c), func(ses *session) { require.Equal(t, i, nextPos(ses, k, 10)) })
			}
		})
	}
	wg.Wait()
	for c := range 8 { // they go on while new sessions flood in
		wg.Go(func() {
			id := fmt.Sprintf("client-%d", c)
			for i := 2; i < 200; i++ {
				s.with(id, func(ses *session) { require.Equal(t, min(i, 9), nextPos(ses, k, 10)) })
				s.with(fmt.Sprintf("flood-%d-%d", c, i), func(*session) {})
			}
		})
	}
	wg.Wait()
	assert.LessOrEqual(t, s.len(), 64)
}

func TestDivergenceLogIsBounded(t *testing.T) {
	s := newSessions(4, time.Hour, time.Now)
	s.with("a", func(ses *session) {
		for i := range maxDivergencesPerSession + 5 {
			ses.diverged(Divergence{Served: fmt.Sprint(i)})
		}
		require.Len(t, ses.divs, maxDivergencesPerSession)
		assert.Equal(t, "0", ses.divs[0].Served, "the first are kept")
		assert.Equal(t, maxDivergencesPerSession+5, ses.divTotal, "the rest are counted")
	})
}

// nextPos is the position session.next returns.
func nextPos(ses *session, k cursorKey, n int) int {
	i, _ := ses.next(k, n, n)
	return i
}
