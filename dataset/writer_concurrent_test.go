package dataset_test

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	. "github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/internal/testdataset/roundtrip"
	"github.com/reprise-dev/reprise/replaycase"
)

// Batches written at once (the exporter's consumers) and one after the other: every file holds
// its own batch's rows and nothing of another's. Published directly, and staged as segments
// and then merged.
func TestConcurrentBatchesDoNotMixRows(t *testing.T) {
	t.Run("direct", func(t *testing.T) { concurrentBatches(t, newWriter(t)) })
	t.Run("segments", func(t *testing.T) {
		concurrentBatches(t, mergeTestWriter(t, t.TempDir(), "data", time.Hour))
	})
}

func concurrentBatches(t *testing.T, w *Writer) {
	const writers, batches = 3, 4
	want := map[string]replaycase.Case{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for g := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range batches {
				cases := fixtureCases(t)
				mu.Lock()
				for _, c := range cases {
					c.CaseID = replaycase.ID(c.Provenance.TraceID, string(rune('a'+g*batches+i)))
					want[c.CaseID] = *c
				}
				mu.Unlock()
				_, err := w.Write(cases)
				assert.NoError(t, err)
			}
		}()
	}
	wg.Wait()
	_, err := w.Flush(true) // merges the segments; nothing to do for direct writes
	require.NoError(t, err)
	cases, _ := readDataset(t, w.Root(), Cases)
	quarantined, _ := readDataset(t, w.Root(), Quarantine)
	_, steps := readDataset(t, w.Root(), Steps)
	got := append(cases, quarantined...)
	require.Len(t, got, len(want))
	for _, c := range got {
		roundtrip.AssertSameCase(t, want[c.CaseID], c)
	}
	assert.Len(t, steps, writers*batches*8)
}
