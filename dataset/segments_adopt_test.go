package dataset_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	. "github.com/reprise-dev/reprise/dataset"
)

// Two collectors share a staging directory. The first dies while it publishes a merge whose
// journal is committed: the segments it names are the journal's, removed when it is rolled
// forward. The second must not adopt and merge them meanwhile (their owner is gone), or their
// rows are published twice. The first dies after its first file is renamed into the dataset, or
// after its last one, before the segments are removed (the journal's last step but one).
func TestSegmentsOfACommittedMergeAreNotAdoptedAgain(t *testing.T) {
	for _, killedAfter := range []int{1, 3} { // the merge publishes 3 files: steps/, quarantine/, cases/
		t.Run(fmt.Sprintf("killed after %d renames", killedAfter), func(t *testing.T) {
			a := newSegmentWriter(t, 1000)
			b, err := NewWriter(ConfigOf(a))
			require.NoError(t, err)
			_, err = b.Recover(time.Now().Add(-15 * time.Minute))
			require.NoError(t, err)

			want := writeBatches(t, a, 2)
			SetAfterRename(a, func(renamed int) error {
				if renamed == killedAfter {
					return errors.New("killed")
				}
				return nil
			})
			_, err = a.Flush(true)
			require.ErrorIs(t, err, ErrCommitted, "the merge's journal is committed, its publishing cut short")
			assert.Len(t, tree(t, a.Root()), killedAfter, "the files renamed into the dataset before the kill")
			ReleaseOwner(a) // the process is gone

			res, err := b.Flush(true)
			require.NoError(t, err)
			assert.Empty(t, res.Files, "the segments are the committed merge's")
			assert.Len(t, stagedDirs(t, StagingOf(a), SegmentPrefix), 2, "left for whoever rolls the merge forward")

			restarted, err := NewWriter(ConfigOf(a))
			require.NoError(t, err)
			_, err = restarted.Recover(time.Now().Add(-15 * time.Minute)) // rolls the merge forward
			require.NoError(t, err)
			res, err = restarted.Flush(true)
			require.NoError(t, err)
			assert.Empty(t, res.Files)
			steps := assertEachCaseOnce(t, a.Root(), want)
			assert.Equal(t, 16, steps)
			assert.Len(t, tree(t, a.Root()), 3, "the merge's files, each once")
			assert.Empty(t, tree(t, StagingOf(a)))
		})
	}
}

// A live writer's segment that is older than the stale age (a quiet collector with a long
// file_max_age, or one that could not merge for a while) is still its own: another writer
// sharing the staging directory that adopted it would merge it while its owner does, and the
// rows would be published twice. Only segments whose owner cannot be told alive or gone keep the
// age rule.
func TestALiveWritersOldSegmentsAreNotAdopted(t *testing.T) {
	live := newSegmentWriter(t, 1000)
	want := writeBatches(t, live, 2)
	old := time.Now().Add(-time.Hour)
	for _, s := range stagedDirs(t, StagingOf(live), SegmentPrefix) {
		require.NoError(t, os.Chtimes(filepath.Join(StagingOf(live), s), old, old))
	}

	other, err := NewWriter(ConfigOf(live))
	require.NoError(t, err)
	_, err = other.Recover(time.Now().Add(-15 * time.Minute))
	require.NoError(t, err)
	res, err := other.Flush(true)
	require.NoError(t, err)
	assert.Empty(t, res.Files, "the live writer's segments are left to it")

	res, err = live.Flush(true)
	require.NoError(t, err)
	assert.NotEmpty(t, res.Files)
	assertEachCaseOnce(t, live.Root(), want)
}

// Two Flushes of one writer run at once (the exporter flushes after a write and on a timer).
// The first merges an old segment and commits the merge's journal, and its publishing is cut
// short; the second, adopting segments, had listed staging before that journal was committed.
// The segment, which the first forgot once its journal owned it, must not be adopted by the
// second, or its rows are published twice.
func TestASegmentMergedByAConcurrentFlushIsNotAdopted(t *testing.T) {
	w := newSegmentWriter(t, 1000)
	want := writeBatches(t, w, 1)
	old := time.Now().Add(-time.Hour) // older than the stale age: the age rule alone allows it
	for _, s := range stagedDirs(t, StagingOf(w), SegmentPrefix) {
		require.NoError(t, os.Chtimes(filepath.Join(StagingOf(w), s), old, old))
	}
	SetAfterRename(w, func(renamed int) error {
		if renamed == 1 {
			return errors.New("killed")
		}
		return nil
	})
	concurrent := false
	SetAfterStagingListed(w, func() {
		if concurrent {
			return
		}
		concurrent = true
		_, err := w.Flush(true) // does not adopt: the outer Flush just did
		require.ErrorIs(t, err, ErrCommitted)
	})
	_, err := w.Flush(true)
	require.True(t, concurrent)
	if err != nil {
		require.ErrorIs(t, err, ErrCommitted)
	}
	SetAfterRename(w, nil)
	_, err = w.Flush(true)
	require.NoError(t, err)
	steps := assertEachCaseOnce(t, w.Root(), want)
	assert.Equal(t, 8, steps)
	assert.Empty(t, stagedDirs(t, StagingOf(w), SegmentPrefix))
}

// Two collectors write into one root. One dies (kill -9: its owner lock is released) with
// committed segments not merged yet; the survivor, without restarting, adopts them at its first
// Flush once adoptEvery has passed since it last looked, and publishes each row once.
func TestASurvivingWriterAdoptsADeadPeersSegmentsWithoutRestarting(t *testing.T) {
	dead := newSegmentWriter(t, 1000)
	survivor, err := NewWriter(ConfigOf(dead))
	require.NoError(t, err)
	_, err = survivor.Recover(time.Now().Add(-15 * time.Minute))
	require.NoError(t, err)
	res, err := survivor.Flush(false) // looks for segments to adopt: none yet
	require.NoError(t, err)
	assert.Empty(t, res.Files)

	want := writeBatches(t, dead, 2)
	ReleaseOwner(dead) // the process is gone, its segments committed and not merged

	res, err = survivor.Flush(true)
	require.NoError(t, err)
	assert.Empty(t, res.Files, "it looked less than adoptEvery ago")
	SetLastAdopted(survivor, time.Now().Add(-AdoptEvery))
	res, err = survivor.Flush(true)
	require.NoError(t, err)
	assert.Len(t, res.Files, 3, "the dead peer's segments are adopted and merged")
	steps := assertEachCaseOnce(t, dead.Root(), want)
	assert.Equal(t, 16, steps)
	assert.Empty(t, stagedDirs(t, StagingOf(dead), SegmentPrefix))
}

// A writer killed while it had no segment in staging (during its start, or idle after its last
// merge was published) leaves its owner file and nothing that names it. The next writer removes
// it: otherwise every such crash left an owner file in staging for good (a kill -9 campaign left
// 2 of 34). An owner file created just now, whose writer may not have locked it yet, stays.
func TestTheOwnerFileOfAWriterKilledWithoutSegmentsIsRemoved(t *testing.T) {
	killed := newSegmentWriter(t, 1000)
	writeBatches(t, killed, 1)
	_, err := killed.Flush(true) // everything published: staging holds no segment of it
	require.NoError(t, err)
	ReleaseOwner(killed) // the process is gone
	old := time.Now().Add(-time.Hour)
	killedOwner := ownerFiles(t, StagingOf(killed))
	require.Len(t, killedOwner, 1)
	require.NoError(t, os.Chtimes(filepath.Join(StagingOf(killed), killedOwner[0]), old, old))
	starting := filepath.Join(StagingOf(killed), "owner-01a25080-0000-7000-8000-000000000000.lock")
	require.NoError(t, os.WriteFile(starting, nil, 0o644)) // created, not locked yet

	restarted, err := NewWriter(ConfigOf(killed))
	require.NoError(t, err)
	_, err = restarted.Recover(time.Now().Add(-15 * time.Minute))
	require.NoError(t, err)

	left := ownerFiles(t, StagingOf(killed))
	assert.NotContains(t, left, killedOwner[0], "the killed writer's owner file is removed")
	assert.Contains(t, left, filepath.Base(starting), "a starting writer's owner file stays")
	assert.Len(t, left, 2, "the restarted writer's and the starting one's")
}

func ownerFiles(t *testing.T, staging string) []string {
	t.Helper()
	entries, err := os.ReadDir(staging)
	require.NoError(t, err)
	var owners []string
	for _, e := range entries {
		if IsOwnerFile(e.Name()) {
			owners = append(owners, e.Name())
		}
	}
	return owners
}
