package replayext

import (
	"context"
	"sync"
	"time"
)

// readContext is the context of the reads of one open file. The dataset package reads every
// page of a file in a bucket under the context the file was opened with (a CaseFile's reads
// take none), and open files serve many requests; so a file is opened with a readContext, and
// each read points it at its own request's context while it runs. A read then ends with its
// request or at its deadline, whichever request opened the file. Reads of a file take turns
// (openFile.turn), so the context is always that of the read under way.
type readContext struct {
	mu  sync.Mutex
	cur context.Context
}

// noRead is the context between reads: nothing reads then, and a read that did would end at
// once instead of waiting without a deadline.
var noRead = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

// serve points the context at ctx until done is called.
func (c *readContext) serve(ctx context.Context) (done func()) {
	c.mu.Lock()
	c.cur = ctx
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		c.cur = nil
		c.mu.Unlock()
	}
}

func (c *readContext) current() context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cur == nil {
		return noRead
	}
	return c.cur
}

func (c *readContext) Deadline() (time.Time, bool) { return c.current().Deadline() }
func (c *readContext) Done() <-chan struct{}       { return c.current().Done() }
func (c *readContext) Err() error                  { return c.current().Err() }
func (c *readContext) Value(key any) any           { return c.current().Value(key) }
