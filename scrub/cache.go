package scrub

import (
	"crypto/sha256"
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

// longCleanCache remembers longer strings (up to maxLongCachedLen bytes) that Text found
// clean, by their SHA-256: system prompts, tool definitions and documents repeat from run to
// run and cost ~100 µs per KB to scan, against about a microsecond to hash. A cryptographic hash
// keeps a crafted string from posing as a clean one. It keeps two generations of at most
// maxLongCachedCount entries each: when the current one is full it becomes the old one, so
// strings seen recently stay and memory stays bounded (~2 × 20,000 × 32-byte keys).
const (
	maxLongCachedLen   = 1 << 20
	maxLongCachedCount = 20000
)

type longCleanCache struct {
	mu       sync.Mutex
	cur, old map[[sha256.Size]byte]struct{}
}

func (c *longCleanCache) has(sum [sha256.Size]byte) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.cur[sum]; ok {
		return true
	}
	if _, ok := c.old[sum]; ok {
		c.addLocked(sum) // still in use: keep it past the next rotation
		return true
	}
	return false
}

func (c *longCleanCache) add(sum [sha256.Size]byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.addLocked(sum)
}

func (c *longCleanCache) addLocked(sum [sha256.Size]byte) {
	if len(c.cur) >= maxLongCachedCount {
		c.old, c.cur = c.cur, nil
	}
	if c.cur == nil {
		c.cur = map[[sha256.Size]byte]struct{}{}
	}
	c.cur[sum] = struct{}{}
}
