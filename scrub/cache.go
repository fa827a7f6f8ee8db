package scrub

import (
	"crypto/sha256"
	"strings"
	"sync"
	"sync/atomic"
)

// Telemetry repeats itself: the same attribute keys on every span, the same model, operation
// and agent names. cleanCache remembers short strings in which the policy found nothing, so
// they are scanned once per process instead of once per span. The result depends only on the
// policy, which does not change after New.
//
// Telemetry also carries ids that never repeat (response ids, tool call ids, session ids), so
// a cache that stopped adding once full would, after the first few thousand runs, hold ids and
// scan every name that a new agent, model or tool brings from then on. The caches keep two
// generations instead, like longCleanCache: when the current one is full it becomes the old
// one, a string found in the old one is added to the current one again, and the ids age out.
const (
	maxCachedLen       = 128   // longer strings (prompts, documents) rarely repeat
	maxGenerationCount = 25000 // two generations: at most ~12 MB with the map overhead
)

// cleanCache holds short strings the policy found nothing in.
type cleanCache struct{ g generations[struct{}] }

func (c *cleanCache) has(v string) bool {
	_, ok := c.g.get(v)
	return ok
}

func (c *cleanCache) add(v string) { c.g.put(v, struct{}{}) }

// kindCache remembers the masking kind of short key names (attribute and JSON keys repeat on
// every span and message), so that a key is normalized and compared with the name lists once
// per process.
type kindCache struct{ g generations[string] } // key → kind ("" for a key that names no secret)

// kindOf returns the kind under which the value of key is masked, or "" (keyNames.kindOf).
func (s *Scrubber) kindOf(key string) string {
	if kind, ok := s.kinds.g.get(key); ok {
		return kind
	}
	kind := s.keys.kindOf(key)
	s.kinds.g.put(key, kind)
	return kind
}

// generations maps short strings (up to maxCachedLen bytes) to what the policy made of them,
// in two generations of about maxGenerationCount entries. Lookups take no lock (sync.Map reads
// scale across cores; every read of a map under a read lock writes the lock). A key is copied when
// it is stored, never kept as given: callers look strings up through views of their own
// buffers (splitParts), and a substring would keep its whole text alive.
type generations[V any] struct {
	cur, old atomic.Pointer[generation[V]]
	rotating sync.Mutex
}

type generation[V any] struct {
	m sync.Map // string → V
	n atomic.Int64
}

func (g *generations[V]) get(k string) (V, bool) {
	var zero V
	if len(k) > maxCachedLen {
		return zero, false
	}
	if v, ok := g.current().m.Load(k); ok {
		return v.(V), true
	}
	if old := g.old.Load(); old != nil {
		if v, ok := old.m.Load(k); ok {
			g.put(k, v.(V)) // still in use: kept past the next rotation
			return v.(V), true
		}
	}
	return zero, false
}

func (g *generations[V]) put(k string, v V) {
	if len(k) > maxCachedLen {
		return
	}
	cur := g.current()
	if cur.n.Load() >= maxGenerationCount {
		cur = g.rotate(cur)
	}
	if _, loaded := cur.m.LoadOrStore(strings.Clone(k), v); !loaded {
		cur.n.Add(1)
	}
}

func (g *generations[V]) current() *generation[V] {
	if cur := g.cur.Load(); cur != nil {
		return cur
	}
	g.cur.CompareAndSwap(nil, new(generation[V]))
	return g.cur.Load()
}

// rotate makes full the old generation and starts a new one, unless another caller has.
func (g *generations[V]) rotate(full *generation[V]) *generation[V] {
	g.rotating.Lock()
	defer g.rotating.Unlock()
	if g.cur.Load() == full {
		g.old.Store(full)
		g.cur.Store(new(generation[V]))
	}
	return g.cur.Load()
}

// len is how many keys the two generations hold (a key may be in both).
func (g *generations[V]) len() int64 {
	n := g.current().n.Load()
	if old := g.old.Load(); old != nil {
		n += old.n.Load()
	}
	return n
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
