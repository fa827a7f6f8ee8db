package dataset

import "time"

// expiringSets are sets of keys, each remembered until its own time, with at most a bound of
// keys counted in all: past it the oldest sets are forgotten first. The writer remembers the
// case ids of adopted segments and published files (resent.go) and the digests of delivered
// cases (redelivered.go) this way. Not safe for concurrent use: the owner holds its lock.
type expiringSets[K comparable, V any] struct {
	sets  []expiringSet[K, V] // oldest first: until grows along it
	count int
}

type expiringSet[K comparable, V any] struct {
	until time.Time
	keys  map[K]V
	// n is what the set counts against the bound: len(keys), or the keys it stands for
	// elsewhere (a file of digests no one reads back in this process).
	n int
	// forgotten, if set, is called when the set is forgotten (to remove its file).
	forgotten func()
}

// add remembers s, then forgets what has expired at now or exceeds bound.
func (e *expiringSets[K, V]) add(s expiringSet[K, V], bound int, now time.Time) {
	e.sets = append(e.sets, s)
	e.count += s.n
	e.expire(bound, now)
}

// expire forgets the sets whose time has passed at now, and the oldest while more than bound
// keys are counted.
func (e *expiringSets[K, V]) expire(bound int, now time.Time) {
	for len(e.sets) > 0 && (now.After(e.sets[0].until) || e.count > bound) {
		if f := e.sets[0].forgotten; f != nil {
			f()
		}
		e.count -= e.sets[0].n
		e.sets = e.sets[1:]
	}
}

// holds reports whether a set remembers k with a value match accepts.
func (e *expiringSets[K, V]) holds(k K, match func(V) bool) bool {
	for _, s := range e.sets {
		if v, ok := s.keys[k]; ok && match(v) {
			return true
		}
	}
	return false
}
