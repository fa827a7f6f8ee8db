package dataset_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	. "github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/replaycase"
)

// stagedDirs lists the directories in staging whose name starts with prefix.
func stagedDirs(t *testing.T, staging, prefix string) []string {
	t.Helper()
	entries, err := os.ReadDir(staging)
	require.NoError(t, err)
	var out []string
	for _, e := range entries {
		if e.IsDir() && strings.HasPrefix(e.Name(), prefix) {
			out = append(out, e.Name())
		}
	}
	return out
}

// publishedRows reads the cases/ and quarantine/ rows under root by case id, and counts the
// steps/ rows.
func publishedRows(t *testing.T, root string) (byID map[string]int, steps int) {
	t.Helper()
	cases, _ := readDataset(t, root, Cases)
	quarantined, _ := readDataset(t, root, Quarantine)
	_, stepRows := readDataset(t, root, Steps)
	byID = map[string]int{}
	for _, c := range append(cases, quarantined...) {
		byID[c.CaseID]++
	}
	return byID, len(stepRows)
}

// assertEachCaseOnce checks that the datasets under root hold each case of want in exactly one
// row, and no other case, and returns how many steps/ rows they hold.
func assertEachCaseOnce(t *testing.T, root string, want map[string]replaycase.Case) (steps int) {
	t.Helper()
	byID, steps := publishedRows(t, root)
	assert.Len(t, byID, len(want))
	for id := range want {
		assert.Equal(t, 1, byID[id], "case %s: one row", id)
	}
	return steps
}

// A process that dies after a segment's journal is written and before the rename that commits
// the segment leaves a batch directory holding a segment's journal. The batch was never
// acknowledged (the caller sends it again), so Recover must not publish it: it is an
// uncommitted batch, left alone while it may be another collector's and deleted once stale.
func TestACrashBeforeASegmentIsRenamedPublishesNothing(t *testing.T) {
	w := newSegmentWriter(t, 1000)
	writeBatches(t, w, 1)
	staging := StagingOf(w)
	segs := stagedDirs(t, staging, SegmentPrefix)
	require.Len(t, segs, 1)
	// What commitSegment leaves when the process dies between the journal and the rename.
	uncommitted := filepath.Join(staging, BatchPrefix+"0190aaaa-0000-7000-8000-000000000000")
	require.NoError(t, os.Rename(filepath.Join(staging, segs[0]), uncommitted))
	require.FileExists(t, filepath.Join(uncommitted, "PUBLISH.json"))
	ReleaseOwner(w)

	restarted, err := NewWriter(ConfigOf(w))
	require.NoError(t, err)
	rec, err := restarted.Recover(time.Now().Add(-15 * time.Minute))
	require.NoError(t, err)
	assert.Empty(t, rec.RolledForward, "a segment's journal does not commit a batch directory")
	res, err := restarted.Flush(true)
	require.NoError(t, err)
	assert.Empty(t, res.Files)
	assert.Empty(t, tree(t, w.Root()), "nothing of an unacknowledged batch is visible")
	assert.DirExists(t, uncommitted, "younger than the stale age, it may be another collector's")

	rec, err = restarted.Recover(time.Now())
	require.NoError(t, err)
	assert.Empty(t, rec.RolledForward)
	assert.Equal(t, 1, rec.RolledBack, "deleted once stale, like any uncommitted batch")
	assert.Empty(t, tree(t, staging))
	assert.Empty(t, tree(t, w.Root()))
}

// When staging cannot be fsynced after a segment's rename, Write reports a failure and the
// caller sends the batch again: the segment must not stay committed, or its rows would be
// merged twice (by this writer's Flush or, after a restart, by whoever adopts it).
func TestAFailedSyncAfterASegmentsRenameLeavesNoSegment(t *testing.T) {
	w := newSegmentWriter(t, 1000)
	failSync := true
	SetSyncStaging(w, func(dir string) error {
		if failSync {
			return &os.PathError{Op: "sync", Path: dir, Err: syscall.EIO}
		}
		return nil
	})
	cases := fixtureCases(t)
	want := map[string]replaycase.Case{}
	for _, c := range cases {
		want[c.CaseID] = *c
	}
	_, err := w.Write(cases)
	require.ErrorIs(t, err, syscall.EIO)
	assert.NotErrorIs(t, err, ErrCommitted, "the caller must send the batch again")
	assert.Empty(t, tree(t, StagingOf(w)), "nothing of the failed batch is left in staging")

	failSync = false
	_, err = w.Write(cases) // the caller's retry
	require.NoError(t, err)
	ReleaseOwner(w) // and a restart, which adopts whatever segment is left
	restarted, err := NewWriter(ConfigOf(w))
	require.NoError(t, err)
	_, err = restarted.Recover(time.Now())
	require.NoError(t, err)
	_, err = restarted.Flush(true)
	require.NoError(t, err)

	steps := assertEachCaseOnce(t, w.Root(), want)
	assert.Equal(t, 8, steps)
	assert.Empty(t, tree(t, StagingOf(w)))
}
