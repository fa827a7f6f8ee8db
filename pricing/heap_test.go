package pricing

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTableHeap reports the heap the embedded price table keeps once parsed: the processor
// holds it for the life of the process, and each byte kept costs about two at the heap's peak
// (GOGC=100; docs/benchmarks.md, issue 16 part 14).
// Run: go test -count 1 -run TestTableHeap -v ./pricing/
func TestTableHeap(t *testing.T) {
	var m runtime.MemStats
	live := func() int64 {
		runtime.GC()
		runtime.ReadMemStats(&m)
		return int64(m.HeapAlloc)
	}
	before := live()
	tbl, err := Parse(embeddedData, EmbeddedVersion)
	require.NoError(t, err)
	kept := live() - before
	providers, models := tbl.Len()
	runtime.KeepAlive(tbl)
	t.Logf("%d providers, %d models: kept %d B", providers, models, kept)
	// 2.10 MB when each price set was a map of pointers, 1.61 MB as a slice.
	assert.Less(t, kept, int64(1850<<10), "the table keeps its prices compactly")
}
