package replaycaseprocessor

import (
	"context"
	"errors"
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
