package replayext

import (
	"sync"

	"github.com/reprise-dev/reprise/callsite"
	"github.com/reprise-dev/reprise/wireapi"
)

// memo is a bounded map for the replay endpoints' repeatable work. A replayed agent sends the
// same request bodies on every run and is answered from the same recorded steps, so what a body
// decodes to and what a step renders to can be looked up instead of computed again. When full
// it starts over: its entries are cheap to recompute and the bound is what matters.
type memo[K comparable, V any] struct {
	mu      sync.RWMutex // read-locked on the hit path, which every repeated request takes
	entries map[K]V
	max     int
}

func newMemo[K comparable, V any](max int) *memo[K, V] {
	return &memo[K, V]{entries: make(map[K]V, max), max: max}
}

func (m *memo[K, V]) get(k K) (V, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	v, ok := m.entries[k]
	return v, ok
}

func (m *memo[K, V]) put(k K, v V) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.entries) >= m.max {
		clear(m.entries)
	}
	m.entries[k] = v
}

// bodyMemo is a memo keyed by request body bytes; bodies larger than memoMaxBody are not
// remembered.
type bodyMemo[V any] struct{ m *memo[string, V] }

func newBodyMemo[V any]() bodyMemo[V] { return bodyMemo[V]{newMemo[string, V](memoEntries)} }

// get looks a body up without copying it into a string key.
func (b bodyMemo[V]) get(body []byte) (V, bool) {
	b.m.mu.RLock()
	defer b.m.mu.RUnlock()
	v, ok := b.m.entries[string(body)]
	return v, ok
}

func (b bodyMemo[V]) put(body []byte, v V) {
	if len(body) <= memoMaxBody {
		b.m.put(string(body), v)
	}
}

const (
	// memoEntries bounds each memo; memoMaxBody is the largest request body remembered, so a
	// body memo holds at most memoEntries × memoMaxBody bytes of bodies (8 MiB) plus what they
	// decode to.
	memoEntries = 256
	memoMaxBody = 32 << 10
)

// chatInput is what a Chat Completions body decodes to: the request as parsed (read only once
// remembered) and its scrubbed call-site form.
type chatInput struct {
	parsed    *wireapi.ChatRequest
	requested callsite.Request
	ids       *callSiteIDs
}

// callSiteIDs remembers one request's call-site id per field set of the store, by the field
// set's number (the store only ever appends field sets, so a number keeps its meaning).
type callSiteIDs struct {
	mu         sync.Mutex
	byFieldSet []string
}

// of is req's call-site id over fields, the store's n-th field set; ids may be nil.
func (ids *callSiteIDs) of(req callsite.Request, n int, fields []string) string {
	if ids == nil {
		return req.ID(fields)
	}
	ids.mu.Lock()
	defer ids.mu.Unlock()
	if n < len(ids.byFieldSet) && ids.byFieldSet[n] != "" {
		return ids.byFieldSet[n]
	}
	id := req.ID(fields)
	if n >= len(ids.byFieldSet) {
		ids.byFieldSet = append(ids.byFieldSet, make([]string, n+1-len(ids.byFieldSet))...)
	}
	ids.byFieldSet[n] = id
	return id
}
