package scrub

import (
	"sync"
	"sync/atomic"
)

// Telemetry repeats itself: the same attribute keys on every span, the same model, operation
// and agent names. cleanCache remembers short strings in which the policy found nothing, so
// they are scanned once per process instead of once per span. The result depends only on the
// policy, which does not change after New.
const (
	maxCachedLen   = 128   // longer strings (prompts, documents) rarely repeat
	maxCachedCount = 50000 // at most ~12 MB with the map overhead; once full, nothing more is added
)

type cleanCache struct {
	m sync.Map // string → struct{}
	n atomic.Int64
}

func (c *cleanCache) has(v string) bool {
	if len(v) > maxCachedLen {
		return false
	}
	_, ok := c.m.Load(v)
	return ok
}

func (c *cleanCache) add(v string) {
	if len(v) > maxCachedLen || c.n.Load() >= maxCachedCount {
		return
	}
	if _, loaded := c.m.LoadOrStore(v, struct{}{}); !loaded {
		c.n.Add(1)
	}
}

// kindCache remembers the masking kind of short key names (attribute and JSON keys repeat on
// every span and message), so that a key is normalized and compared with the name lists once
// per process. Bounded like cleanCache.
type kindCache struct {
	m sync.Map // key → kind ("" for a key that names no secret)
	n atomic.Int64
}

// kindOf returns the kind under which the value of key is masked, or "" (keyNames.kindOf).
func (s *Scrubber) kindOf(key string) string {
	if len(key) > maxCachedLen {
		return s.keys.kindOf(key)
	}
	if kind, ok := s.kinds.m.Load(key); ok {
		return kind.(string)
	}
	kind := s.keys.kindOf(key)
	if s.kinds.n.Load() < maxCachedCount {
		if _, loaded := s.kinds.m.LoadOrStore(key, kind); !loaded {
			s.kinds.n.Add(1)
		}
	}
	return kind
}
