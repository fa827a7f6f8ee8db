package replaycaseprocessor

import (
	"context"
	"errors"
	"sync"

	"go.opentelemetry.io/collector/extension/xextension/storage"
)

// groupCommit puts the writes of concurrent requests into one storage transaction. A request
// that finds no transaction running commits at once (no added latency for a lone client);
// requests that arrive while one runs wait and are committed together in the next, and each
// caller returns only once the transaction holding its operations has committed, so nothing is
// acknowledged before it is stored. One bbolt transaction per request rewrote whole leaf pages
// (each leaf holds at least four records) for every record: grouping writes each page once.
type groupCommit struct {
	client storage.Client

	mu      sync.Mutex
	busy    bool             // a caller is committing
	waiting []*commitRequest // queued for the next transaction, oldest first
}

type commitRequest struct {
	ops    []*storage.Operation
	result chan error // the transaction's outcome, or errYourTurn
}

// errYourTurn tells a waiting caller that it commits the next transaction.
var errYourTurn = errors.New("commit the next transaction")

// batch stores ops in a transaction shared with the callers that wait at the same time, and
// returns that transaction's error.
func (g *groupCommit) batch(ctx context.Context, ops ...*storage.Operation) error {
	req := &commitRequest{ops: ops, result: make(chan error, 1)}
	g.mu.Lock()
	g.waiting = append(g.waiting, req)
	lead := !g.busy
	g.busy = true
	g.mu.Unlock()
	if !lead {
		if err := <-req.result; !errors.Is(err, errYourTurn) {
			return err
		}
	}
	g.mu.Lock()
	group := g.waiting
	g.waiting = nil
	g.mu.Unlock()
	var all []*storage.Operation
	if len(group) == 1 {
		all = req.ops
	} else {
		for _, r := range group {
			all = append(all, r.ops...)
		}
	}
	// The transaction is everyone's: one caller's cancelled context must not fail the others.
	err := g.client.Batch(context.WithoutCancel(ctx), all...)
	for _, r := range group {
		if r != req {
			r.result <- err
		}
	}
	g.mu.Lock()
	if len(g.waiting) > 0 {
		g.waiting[0].result <- errYourTurn
	} else {
		g.busy = false
	}
	g.mu.Unlock()
	return err
}
