package replaycaseprocessor

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.opentelemetry.io/collector/extension/xextension/storage"
)

// groupCommit puts the writes of concurrent requests into one storage transaction. A request
// that finds no transaction running commits at once, unless requests arrive steadily (below);
// requests that arrive while one runs wait and are committed together in the next, and each
// caller returns only once the transaction holding its operations has committed, so nothing is
// acknowledged before it is stored. One bbolt transaction per request rewrote whole leaf pages
// (each leaf holds at least four records) for every record: grouping writes each page once.
//
// Requests that arrive one at a time at a steady pace (500 runs/s is a request every
// millisecond or two) rarely overlap a transaction, so each would pay its own. When the previous
// transaction ended less than steadyGap ago, the caller that finds none running first waits
// gather for others to join it (as PostgreSQL's commit_delay): a request is then acknowledged up
// to gather later, and still only after its transaction has committed. A lone client, whose
// requests are further apart, never waits. A caller that sends one request after the other
// (one upstream client that waits for each answer, a Kafka partition consumed message by
// message) is steady but has nobody to gather: when a gather
// catches no one, gathering stops for gatherBackoff, so such a caller waits once per backoff
// instead of on every request.
type groupCommit struct {
	client storage.Client
	// gather is how long a caller waits for others before committing when requests arrive
	// steadily; 0 never waits.
	gather        time.Duration
	steadyGap     time.Duration
	gatherBackoff time.Duration

	mu            sync.Mutex
	busy          bool             // a caller is committing
	waiting       []*commitRequest // queued for the next transaction, oldest first
	lastEnd       time.Time        // when the last transaction ended
	noGatherUntil time.Time        // a gather caught no one: do not gather again before this
}

// Measured end to end with `scripts/bench-pipeline.sh 5000 3` (docs/benchmarks.md, "What was
// changed in the write-ahead path"): for 5,000 runs at 500 runs/s the collector wrote 197–198 MiB
// with a transaction per request and 66–72 MiB with these values (5 ms gather, 100 ms backoff),
// for the same paced CPU within the noise; 5 ms is small next to an OTLP export's timeout.
const (
	walCommitGather        = 5 * time.Millisecond
	walCommitSteadyGap     = 10 * time.Millisecond
	walCommitGatherBackoff = 100 * time.Millisecond
)

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
	now := time.Now()
	steady := g.gather > 0 && !g.lastEnd.IsZero() && now.Sub(g.lastEnd) < g.steadyGap && !now.Before(g.noGatherUntil)
	g.mu.Unlock()
	if !lead {
		if err := <-req.result; !errors.Is(err, errYourTurn) {
			return err
		}
	} else if steady {
		time.Sleep(g.gather)
	}
	g.mu.Lock()
	group := g.waiting
	g.waiting = nil
	if lead && steady && len(group) == 1 {
		g.noGatherUntil = time.Now().Add(g.gatherBackoff)
	}
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
	g.lastEnd = time.Now()
	if len(g.waiting) > 0 {
		g.waiting[0].result <- errYourTurn
	} else {
		g.busy = false
	}
	g.mu.Unlock()
	return err
}
