package replayext

import (
	"slices"
	"sync"

	"github.com/reprise-dev/reprise/replaycase"
)

// caseCache keeps the most recently read cases.
type caseCache struct {
	mu    sync.Mutex
	size  int
	order []string // least recently used first
	cases map[string]*replaycase.Case
}

func newCaseCache(size int) *caseCache {
	return &caseCache{size: size, cases: map[string]*replaycase.Case{}}
}

func (c *caseCache) get(id string) (*replaycase.Case, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.cases[id]
	if ok {
		c.touch(id)
	}
	return v, ok
}

func (c *caseCache) put(id string, v *replaycase.Case) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.cases[id]; !ok && len(c.cases) >= c.size {
		delete(c.cases, c.order[0])
		c.order = c.order[1:]
	}
	c.cases[id] = v
	c.touch(id)
}

// touch moves id to the most recently used end. The cache is small, so a slice will do.
func (c *caseCache) touch(id string) {
	if n := len(c.order); n > 0 && c.order[n-1] == id {
		return // already the most recent: the common case of a run replayed call after call
	}
	if i := slices.Index(c.order, id); i >= 0 {
		c.order = append(c.order[:i], c.order[i+1:]...)
	}
	c.order = append(c.order, id)
}

// drop forgets a case whose file is gone.
func (c *caseCache) drop(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.cases, id)
	c.order = slices.DeleteFunc(c.order, func(x string) bool { return x == id })
}
