package replaycaseprocessor

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/extension/xextension/storage"
)

// recordingClient records each transaction's keys; the first transaction blocks until release
// is closed, so that the test can queue writers behind it.
type recordingClient struct {
	storage.Client
	release chan struct{}
	fail    error

	mu  sync.Mutex
	txs [][]string
}

func (c *recordingClient) Batch(_ context.Context, ops ...*storage.Operation) error {
	c.mu.Lock()
	first := len(c.txs) == 0
	keys := make([]string, len(ops))
	for i, op := range ops {
		keys[i] = op.Key
	}
	c.txs = append(c.txs, keys)
	c.mu.Unlock()
	if first {
		<-c.release
	}
	return c.fail
}

func (c *recordingClient) transactions() [][]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([][]string(nil), c.txs...)
}

// Writers that arrive while a transaction runs are committed together in the next one, and each
// returns only after its own transaction.
func TestGroupCommitSharesOneTransactionAmongWaitingWriters(t *testing.T) {
	c := &recordingClient{release: make(chan struct{})}
	g := &groupCommit{client: c}
	returned := make(chan string, 10)
	write := func(key string) {
		require.NoError(t, g.batch(context.Background(), storage.SetOperation(key, []byte(key))))
		returned <- key
	}
	go write("first")
	require.Eventually(t, func() bool { return len(c.transactions()) == 1 }, 5*time.Second, time.Millisecond)
	for _, k := range []string{"a", "b", "c"} {
		go write(k)
	}
	require.Eventually(t, func() bool { g.mu.Lock(); defer g.mu.Unlock(); return len(g.waiting) == 3 }, 5*time.Second, time.Millisecond)
	select {
	case k := <-returned:
		t.Fatalf("%s returned before its transaction committed", k)
	default:
	}
	close(c.release)
	got := map[string]bool{}
	for range 4 {
		got[<-returned] = true
	}
	assert.Len(t, got, 4)
	txs := c.transactions()
	require.Len(t, txs, 2, "the three waiting writers share the second transaction")
	assert.Equal(t, []string{"first"}, txs[0])
	assert.ElementsMatch(t, []string{"a", "b", "c"}, txs[1])
	assert.False(t, g.busy, "idle again")
}

// A failed transaction fails every writer in it, so that none of their requests is acknowledged.
func TestGroupCommitFailureReachesEveryWriterInTheTransaction(t *testing.T) {
	c := &recordingClient{release: make(chan struct{}), fail: errors.New("no space left on device")}
	g := &groupCommit{client: c}
	errs := make(chan error, 3)
	go func() { errs <- g.batch(context.Background(), storage.SetOperation("first", nil)) }()
	require.Eventually(t, func() bool { return len(c.transactions()) == 1 }, 5*time.Second, time.Millisecond)
	go func() { errs <- g.batch(context.Background(), storage.SetOperation("a", nil)) }()
	go func() { errs <- g.batch(context.Background(), storage.SetOperation("b", nil)) }()
	require.Eventually(t, func() bool { g.mu.Lock(); defer g.mu.Unlock(); return len(g.waiting) == 2 }, 5*time.Second, time.Millisecond)
	close(c.release)
	for range 3 {
		assert.ErrorContains(t, <-errs, "no space left on device")
	}
}

// Many concurrent writers: every operation is in exactly one transaction (run with -race).
func TestGroupCommitConcurrentWritersEachStoredOnce(t *testing.T) {
	c := &recordingClient{release: make(chan struct{})}
	close(c.release)
	g := &groupCommit{client: c}
	var wg sync.WaitGroup
	for i := range 200 {
		wg.Go(func() {
			assert.NoError(t, g.batch(context.Background(), storage.SetOperation(string(rune('a'+i%26))+time.Duration(i).String(), nil)))
		})
	}
	wg.Wait()
	seen := map[string]int{}
	for _, tx := range c.transactions() {
		for _, k := range tx {
			seen[k]++
		}
	}
	assert.Len(t, seen, 200)
	for k, n := range seen {
		assert.Equal(t, 1, n, k)
	}
}

// Requests arriving one at a time at a steady pace share a transaction: the caller that finds
// none running waits gather for the next, and both return only after their shared commit.
func TestGroupCommitGathersSteadyRequests(t *testing.T) {
	c := &recordingClient{release: make(chan struct{})}
	close(c.release)
	g := &groupCommit{client: c, gather: 500 * time.Millisecond, steadyGap: time.Minute}
	require.NoError(t, g.batch(context.Background(), storage.SetOperation("previous", nil)))
	first := make(chan error, 1)
	go func() { first <- g.batch(context.Background(), storage.SetOperation("a", nil)) }()
	require.Eventually(t, func() bool { g.mu.Lock(); defer g.mu.Unlock(); return g.busy }, 5*time.Second, time.Millisecond)
	require.NoError(t, g.batch(context.Background(), storage.SetOperation("b", nil)))
	require.NoError(t, <-first)
	txs := c.transactions()
	require.Len(t, txs, 2)
	assert.ElementsMatch(t, []string{"a", "b"}, txs[1], "b arrived while a gathered")
}

// A lone request (no transaction ended within steadyGap) commits at once.
func TestGroupCommitLoneRequestDoesNotWait(t *testing.T) {
	c := &recordingClient{release: make(chan struct{})}
	close(c.release)
	g := &groupCommit{client: c, gather: time.Hour, steadyGap: time.Nanosecond}
	done := make(chan error, 2)
	go func() {
		done <- g.batch(context.Background(), storage.SetOperation("first", nil))
		time.Sleep(time.Millisecond) // longer than steadyGap
		done <- g.batch(context.Background(), storage.SetOperation("later", nil))
	}()
	for range 2 {
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(5 * time.Second):
			t.Fatal("a lone request waited for others")
		}
	}
	assert.Len(t, c.transactions(), 2)
}

// A caller that sends one request after the other is steady but has nobody to gather: once a
// gather has caught no one, its next requests within the backoff commit at once.
func TestGroupCommitSequentialCallerWaitsOncePerBackoff(t *testing.T) {
	c := &recordingClient{release: make(chan struct{})}
	close(c.release)
	g := &groupCommit{client: c, gather: 500 * time.Millisecond, steadyGap: time.Minute, gatherBackoff: time.Minute}
	require.NoError(t, g.batch(context.Background(), storage.SetOperation("first", nil))) // nothing before it: no wait
	start := time.Now()
	require.NoError(t, g.batch(context.Background(), storage.SetOperation("second", nil))) // steady: gathers, catches no one
	assert.GreaterOrEqual(t, time.Since(start), 500*time.Millisecond, "the second request gathered")
	start = time.Now()
	for i := range 20 {
		require.NoError(t, g.batch(context.Background(), storage.SetOperation(fmt.Sprint(i), nil)))
	}
	assert.Less(t, time.Since(start), 500*time.Millisecond, "within the backoff nobody waits")
	assert.Len(t, c.transactions(), 22)
}

// commitThreeTogether leaves g with a transaction of three requests just behind it, as the
// clients of a burst leave it.
func commitThreeTogether(t *testing.T, g *groupCommit, c *recordingClient) {
	t.Helper()
	done := make(chan error, 4)
	go func() { done <- g.batch(context.Background(), storage.SetOperation("first", nil)) }()
	require.Eventually(t, func() bool { return len(c.transactions()) == 1 }, 5*time.Second, time.Millisecond)
	for _, k := range []string{"a", "b", "c"} {
		go func() { done <- g.batch(context.Background(), storage.SetOperation(k, nil)) }()
	}
	require.Eventually(t, func() bool { g.mu.Lock(); defer g.mu.Unlock(); return len(g.waiting) == 3 }, 5*time.Second, time.Millisecond)
	close(c.release)
	for range 4 {
		require.NoError(t, <-done)
	}
	require.Len(t, c.transactions(), 2)
}

// writeTogether sends one request per key at once and returns how long the last took.
func writeTogether(t *testing.T, g *groupCommit, keys ...string) time.Duration {
	t.Helper()
	start := time.Now()
	var wg sync.WaitGroup
	for _, k := range keys {
		wg.Go(func() { assert.NoError(t, g.batch(context.Background(), storage.SetOperation(k, nil))) })
	}
	wg.Wait()
	return time.Since(start)
}

// Clients that each wait for their answer (a burst) all join a gather at once: it ends as soon as
// as many wait as the largest recent transaction held, not when gather is over.
func TestGroupCommitGatherEndsOnceAsManyWaitAsTheLargestRecentTransaction(t *testing.T) {
	c := &recordingClient{release: make(chan struct{})}
	g := &groupCommit{client: c, gather: 20 * time.Second, steadyGap: time.Minute}
	commitThreeTogether(t, g, c)
	took := writeTogether(t, g, "x", "y", "z")
	assert.Less(t, took, 10*time.Second, "the gather ended when the third request joined")
	txs := c.transactions()
	require.Len(t, txs, 3)
	assert.ElementsMatch(t, []string{"x", "y", "z"}, txs[2], "the three share one transaction")
}

// Fewer requests than the largest recent transaction: the gather lasts its whole time.
func TestGroupCommitGatherWithFewerRequestsWaitsItsWholeTime(t *testing.T) {
	c := &recordingClient{release: make(chan struct{})}
	g := &groupCommit{client: c, gather: 300 * time.Millisecond, steadyGap: time.Minute, gatherBackoff: time.Minute}
	commitThreeTogether(t, g, c)
	took := writeTogether(t, g, "x", "y")
	assert.GreaterOrEqual(t, took, 300*time.Millisecond)
	require.Len(t, c.transactions(), 3)
	assert.ElementsMatch(t, []string{"x", "y"}, c.transactions()[2])
}

// The largest transaction counts for walCommitLargestWindow only: after that the next transaction's size
// replaces it, so one large burst long ago does not make every gather wait its whole time.
func TestGroupCommitLargestTransactionLapses(t *testing.T) {
	c := &recordingClient{release: make(chan struct{})}
	g := &groupCommit{client: c, gather: 400 * time.Millisecond, steadyGap: time.Minute}
	commitThreeTogether(t, g, c)
	g.mu.Lock()
	g.largest, g.largestAt = 10, time.Now().Add(-walCommitLargestWindow-time.Second) // a burst of ten, long ago
	g.mu.Unlock()
	assert.GreaterOrEqual(t, writeTogether(t, g, "x", "y", "z"), 400*time.Millisecond, "ten never wait: the gather lasts")
	assert.Less(t, writeTogether(t, g, "u", "v", "w"), 400*time.Millisecond, "three is now the largest")
	require.Len(t, c.transactions(), 4)
	assert.ElementsMatch(t, []string{"u", "v", "w"}, c.transactions()[3])
}
