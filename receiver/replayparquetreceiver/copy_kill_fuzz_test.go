package replayparquetreceiver

import (
	"context"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/internal/testfixtures"
)

// A copy (emit: cases) killed anywhere, any number of times, with batch_size changed between
// its lives, writes every case of its source exactly once once a last life finishes. Each byte
// of the input is one life before that last one: its batch_size (1-5), where it dies (nowhere:
// it finishes; after the exporter wrote its nth push, before the checkpoint after it; or at its
// nth push, before the exporter takes it) and n (1-4). A kill point the life never reaches
// lets it finish. Run with
//
//	go test -run '^$' -fuzz FuzzACopyKilledAnywhereWritesEveryCaseOnce -fuzztime 5m ./receiver/replayparquetreceiver/
func FuzzACopyKilledAnywhereWritesEveryCaseOnce(f *testing.F) {
	f.Add([]byte{0x0b, 0x28})             // batch_size 4, dies after push 1; batch_size 1, dies after push 2
	f.Add([]byte{0x11, 0x11, 0x11})       // batch_size 2, dies before push 1 is taken, three times
	f.Add([]byte{0x08, 0x0c, 0x6a, 0x00}) // 1 after push 1; 5 after push 1; 3 before push 4; 1 finishes
	src := filepath.Join(f.TempDir(), "src")
	var once sync.Once
	var want map[string]int
	f.Fuzz(func(t *testing.T, lives []byte) {
		if len(lives) > 6 {
			lives = lives[:6] // each life reads the files again: a few are as good as many
		}
		once.Do(func() {
			capture(t, src, testfixtures.OTelEvents, 1, 5, strict)
			want = copiedRowsByID(t, src)
		})
		require.Len(t, want, 5)
		life := copyLife{t: t, src: src, dst: filepath.Join(t.TempDir(), "dst"), storageDir: t.TempDir()}
		for _, b := range lives {
			batchSize, kill, n := int(b&7)%5+1, lifeEnd((b>>3)&3), int32(b>>5)%4+1
			if kill == 3 {
				kill = diesAfterWrite
			}
			life.edit = func(c *Config) { c.BatchSize = batchSize }
			life.diesAt(n, kill)
		}
		life.edit = nil
		life.restartsAndFinishes()
		require.Equal(t, want, copiedRowsByID(t, life.dst), "every case of the source once in the copy (lives %x)", lives)
	})
}

// lifeEnd is where a life of a copy ends.
type lifeEnd byte

const (
	finishes       lifeEnd = iota // it copies its whole backlog
	diesAfterWrite                // at its nth push, once the exporter wrote it, before the checkpoint after it
	diesBeforeTake                // at its nth push, before the exporter takes it
)

// diesAt runs a life that ends as end says at its nth push, or finishes its backlog when it
// pushes fewer; it tells whether the life died.
func (l copyLife) diesAt(n int32, end lifeEnd) (died bool) {
	var dead atomic.Bool
	killed := make(chan struct{})
	var pushes atomic.Int32
	l.run(func(exp exporter.Traces, ctx context.Context, td ptrace.Traces) error {
		if dead.Load() {
			return errDead // the collector is gone: nothing more is taken
		}
		at := end != finishes && pushes.Add(1) == n
		if at && end == diesBeforeTake {
			dead.Store(true)
			close(killed)
			return errDead
		}
		if err := exp.ConsumeTraces(ctx, td); err != nil {
			return err
		}
		if at {
			dead.Store(true)
			close(killed)
		}
		return nil
	}, &dead, func(r *replayReceiver) {
		select {
		case <-killed:
		case <-r.backlogDone:
		case <-time.After(30 * time.Second):
			l.t.Fatal("the copy neither died nor finished")
		}
	})
	return dead.Load()
}
