package dataset

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Digests are kept for deliveredFor and at most maxDelivered of them, the oldest going first,
// their files with them.
func TestDeliveredDigestsAreKeptForABoundedTimeAndCount(t *testing.T) {
	dir := t.TempDir()
	file := func(name string) string {
		path := filepath.Join(dir, deliveredPrefix+name)
		require.NoError(t, os.WriteFile(path, make([]byte, digestSize), 0o644))
		return path
	}
	now := time.Now()
	var d deliveredDigests
	oldest, older := file("a"), file("b")
	d.keep(oldest, map[caseDigest]bool{{1}: true}, maxDelivered, now)
	d.keep(older, nil, 1, now)
	assert.NoFileExists(t, oldest, "over maxDelivered: the oldest is forgotten")
	held := func(bool) bool { return true }
	assert.False(t, d.kept.holds(caseDigest{1}, held))
	assert.FileExists(t, older)

	d.keep(file("c"), map[caseDigest]bool{{2}: true}, 1, now.Add(deliveredFor/2))
	d.mu.Lock()
	d.kept.expire(maxDelivered, now.Add(deliveredFor+time.Second))
	d.mu.Unlock()
	assert.NoFileExists(t, older, "past deliveredFor")
	assert.True(t, d.kept.holds(caseDigest{2}, held), "kept deliveredFor from when it was read")
}
