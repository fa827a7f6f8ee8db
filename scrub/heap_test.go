package scrub

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestScrubberHeap reports what building a Scrubber with the default policy allocates and
// keeps, for the first one in the process and for a second with the same policy (the
// processor's and the replay extension's), and checks that the second keeps little: the rule
// set is shared.
// Run: go test -count 1 -run TestScrubberHeap -v ./scrub/
func TestScrubberHeap(t *testing.T) {
	var m runtime.MemStats
	measure := func() (live, allocated int64) {
		runtime.GC()
		runtime.ReadMemStats(&m)
		return int64(m.HeapAlloc), int64(m.TotalAlloc)
	}
	live0, alloc0 := measure()
	Kinds() // loads gitleaks' default configuration, once per process
	live1, alloc1 := measure()
	first := newScrubber(t, Config{Enabled: true, Key: "processor"})
	live2, alloc2 := measure()
	second := newScrubber(t, Config{Enabled: true, Key: "replay extension"})
	live3, alloc3 := measure()
	runtime.KeepAlive(first)
	runtime.KeepAlive(second)

	t.Logf("gitleaks default configuration: allocated %d B, kept %d B (0 if an earlier test loaded it)", alloc1-alloc0, live1-live0)
	t.Logf("first Scrubber:                 allocated %d B, kept %d B", alloc2-alloc1, live2-live1)
	t.Logf("second Scrubber, same policy:   allocated %d B, kept %d B", alloc3-alloc2, live3-live2)
	assert.Less(t, live3-live2, int64(512<<10), "the second Scrubber shares the first one's rule set")
}
