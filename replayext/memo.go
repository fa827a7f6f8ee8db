package replayext

import (
	"bytes"
	"net/http"
	"sync"

	"github.com/reprise-dev/reprise/callsite"
)

// memo is a bounded map for the replay endpoints' repeatable work. A replayed agent sends the
// same request bodies on every run and is answered from the same recorded steps, so what a body
// decodes to and what a step renders to can be looked up instead of computed again. It holds at
// most memoEntries entries and memoBytes bytes (as its callers weigh them: the body or the
// answer); when full it starts over: its entries are cheap to recompute and the bound is what
// matters.
type memo[K comparable, V any] struct {
	mu      sync.RWMutex // read-locked on the hit path, which every repeated request takes
	entries map[K]V
	bytes   int
}

func newMemo[K comparable, V any]() *memo[K, V] {
	return &memo[K, V]{entries: make(map[K]V, memoEntries)}
}

func (m *memo[K, V]) get(k K) (V, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	v, ok := m.entries[k]
	return v, ok
}

// put remembers v, which weighs size bytes; larger than memoMaxEntry, it is not remembered.
func (m *memo[K, V]) put(k K, v V, size int) {
	if size > memoMaxEntry {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.entries) >= memoEntries || m.bytes+size > memoBytes {
		clear(m.entries)
		m.bytes = 0
	}
	m.entries[k] = v
	m.bytes += size
}

// forget drops every entry: what they were derived from changed.
func (m *memo[K, V]) forget() {
	m.mu.Lock()
	defer m.mu.Unlock()
	clear(m.entries)
	m.bytes = 0
}

// bodyMemo is a memo keyed by request body bytes.
type bodyMemo[V any] struct{ m *memo[string, V] }

func newBodyMemo[V any]() bodyMemo[V] { return bodyMemo[V]{newMemo[string, V]()} }

// get looks a body up without copying it into a string key.
func (b bodyMemo[V]) get(body []byte) (V, bool) {
	b.m.mu.RLock()
	defer b.m.mu.RUnlock()
	v, ok := b.m.entries[string(body)]
	return v, ok
}

func (b bodyMemo[V]) put(body []byte, v V) {
	if len(body) <= memoMaxEntry {
		b.m.put(string(body), v, len(body))
	}
}

const (
	// memoEntries and memoBytes bound each memo: 256 entries, 4 MiB of bodies or answers (what
	// a body decodes to is a few times its size). memoMaxEntry is the largest body or answer
	// remembered.
	memoEntries  = 256
	memoBytes    = 4 << 20
	memoMaxEntry = 32 << 10
)

// modelInput is what a model request body decodes to: the request as parsed (P; read only once
// remembered), its scrubbed call-site form and its call-site ids.
type modelInput[P any] struct {
	parsed    P
	requested callsite.Request
	ids       *callSiteIDs
}

// decodeModelRequest is what a model request body decodes to, remembered in m: parse decodes
// it, requested gives its call-site form, which is scrubbed with the policy the recordings were
// scrubbed with, and finish (when not nil) adjusts the result before it is remembered. It
// answers a body the API would refuse itself; ok is false then.
func decodeModelRequest[P any](r *replay, w http.ResponseWriter, m bodyMemo[modelInput[P]], body []byte,
	parse func([]byte) (P, error), requested func(P) callsite.Request, finish func(*modelInput[P])) (in modelInput[P], ok bool) {
	if in, ok = m.get(body); ok {
		return in, true
	}
	parsed, err := parse(bytes.Clone(body)) // what is remembered must not share the pooled body
	if err != nil {
		writeRequestError(w, err)
		return in, false
	}
	in = modelInput[P]{parsed: parsed, requested: requested(parsed), ids: &callSiteIDs{}}
	scrubRequest(r.scrubber, &in.requested)
	if finish != nil {
		finish(&in)
	}
	m.put(body, in)
	return in, true
}

// answerKey names a rendered answer: the recorded step, as its case id and its position among
// the case's model calls, which stay its name while the case is indexed (a *Step would keep
// its whole case in memory after the case cache let it go); the API; and what else the
// answer depends on (the Responses API's previous_response_id).
type answerKey struct {
	step    hit
	api     string
	variant string
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
