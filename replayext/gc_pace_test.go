package replayext

import (
	"path/filepath"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/dataset"
)

// gcPercentSource records the garbage collector's target while the index of a file is read.
type gcPercentSource struct {
	*localSource
	seen []int
}

func (g *gcPercentSource) scanIndex(file string, fn func(row int64, r *dataset.ReplayIndexRow) error) error {
	g.seen = append(g.seen, gcPercent())
	return g.localSource.scanIndex(file, fn)
}

// gcPercent is the garbage collector's current target (it is read by setting one).
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// A refresh that reads files runs with half the process's garbage collector target and
// restores it; a process that runs without a target (GOGC=off) keeps it.
func TestRefreshTightensTheGCTargetWhileReadingFiles(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	for _, c := range []struct{ process, during int }{{100, 50}, {80, 40}, {1, 1}, {-1, -1}} {
		root := filepath.Join(t.TempDir(), "data")
		generateDataset(t, root, 0, 20, 100)
		src := &gcPercentSource{localSource: newLocalSource(root)}
		s := newStoreOf(src, 4)
		debug.SetGCPercent(c.process)
		added, _, failed := s.refresh().counts()
		require.Empty(t, failed)
		require.Equal(t, 20, added)
		require.NotEmpty(t, src.seen)
		for _, p := range src.seen {
			assert.Equal(t, c.during, p, "process at %d", c.process)
		}
		assert.Equal(t, c.process, gcPercent(), "restored after the refresh")
		src.seen = nil
		s.refresh() // no new files: the target is left alone
		assert.Empty(t, src.seen)
		assert.Equal(t, c.process, gcPercent())
	}
}
