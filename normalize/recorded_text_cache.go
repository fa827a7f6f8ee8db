package normalize

import "sync"

// A textCache holds what was read from recorded texts, by text, for texts an agent records
// again and again: the tools it offers (recorded_tools.go) and its invocation parameters
// (recorded_params.go) are the same on every model call of every run, and reading them took a
// large share of the collector's CPU with production-shaped traffic (docs/benchmarks.md, parts
// 20 and 21). Only what was read without any problem is kept, so a hit gives what reading the
// text gives; clone gives every caller its own copy, which it may change.
//
// The cache is bounded by the bytes of the texts it holds; when a new text would pass the bound
// it is emptied and starts again, which costs one read of each text an agent records.
type textCache[T any] struct {
	mu     sync.Mutex
	byText map[string]T
	bytes  int
	clone  func(T) T
}

// maxTextCacheBytes bounds the texts a cache holds: a few agents' tool sets.
const maxTextCacheBytes = 4 << 20

func newTextCache[T any](clone func(T) T) *textCache[T] {
	return &textCache[T]{byText: map[string]T{}, clone: clone}
}

// get returns a copy of what was read from text.
func (c *textCache[T]) get(text string) (T, bool) {
	c.mu.Lock()
	v, ok := c.byText[text]
	c.mu.Unlock()
	if !ok {
		return v, false
	}
	return c.clone(v), true
}

// put keeps a copy of what was read from text without a problem.
func (c *textCache[T]) put(text string, v T) {
	if len(text) > maxTextCacheBytes/4 {
		return // one such text would crowd out the rest
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.byText[text]; ok {
		return
	}
	if c.bytes+len(text) > maxTextCacheBytes {
		clear(c.byText)
		c.bytes = 0
	}
	c.byText[text] = c.clone(v)
	c.bytes += len(text)
}
