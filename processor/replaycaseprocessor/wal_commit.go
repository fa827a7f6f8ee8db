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
//
// A gather also ends as soon as as many requests wait as the largest transaction of the last
// second held (walCommitLargestWindow). Clients that each wait for their answer before sending again (a
// burst from a fixed set of clients) then all join within a millisecond or so, and waiting out
// the rest of gather would only delay them: with 8 such clients every transaction paid the full
// gather, which held them to ~1,250 requests a second. Requests at a steady pace rarely reach the
// largest recent transaction before gather is over, so their transactions stay as large.
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
	largest       int              // requests in the largest transaction since largestAt
	largestAt     time.Time        // when largest was set; it lapses after walCommitLargestWindow
	gatherFull    chan struct{}    // closed once largest requests wait; nil when no gather can end early
}

// Measured end to end with `scripts/bench-pipeline.sh 5000 3` (docs/benchmarks.md, "What was
// changed in the write-ahead path"): for 5,000 runs at 500 runs/s the collector wrote 197–198 MiB
// with a transaction per request and 66–72 MiB with these values (5 ms gather, 100 ms backoff),
// for the same paced CPU within the noise; 5 ms is small next to an OTLP export's timeout. Ending
// a gather at the largest transaction of the last second (part 12 there) sent a burst from 8
// clients in ~1 s instead of ~6 s, for 11–17 % less burst CPU and the same paced CPU.
const (
	walCommitGather        = 5 * time.Millisecond
	walCommitSteadyGap     = 10 * time.Millisecond
	walCommitGatherBackoff = 100 * time.Millisecond
	walCommitLargestWindow = time.Second
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
	if g.gatherFull != nil && len(g.waiting) >= g.largest {
		close(g.gatherFull)
		g.gatherFull = nil
	}
	lead := !g.busy
	g.busy = true
	now := time.Now()
	steady := g.gather > 0 && !g.lastEnd.IsZero() && now.Sub(g.lastEnd) < g.steadyGap && !now.Before(g.noGatherUntil)
	var full chan struct{}
	if lead && steady && g.largest > 1 {
		full = make(chan struct{})
		g.gatherFull = full
	}
	g.mu.Unlock()
	if !lead {
		if err := <-req.result; !errors.Is(err, errYourTurn) {
			return err
		}
	} else if steady {
		g.gatherFor(full)
	}
	g.mu.Lock()
	group := g.waiting
	g.waiting = nil
	g.gatherFull = nil
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
	if len(group) >= g.largest || g.lastEnd.Sub(g.largestAt) > walCommitLargestWindow {
		g.largest, g.largestAt = len(group), g.lastEnd
	}
	if len(g.waiting) > 0 {
		g.waiting[0].result <- errYourTurn
	} else {
		g.busy = false
	}
	g.mu.Unlock()
	return err
}

// gatherFor waits gather, or less if full is closed first (nil never is).
func (g *groupCommit) gatherFor(full chan struct{}) {
	timer := time.NewTimer(g.gather)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-full:
	}
}
