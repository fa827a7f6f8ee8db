package dataset_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	. "github.com/reprise-dev/reprise/dataset"
)

// A merge's journal is committed and its publishing cut short by a crash; before the restart,
// the file it had published is removed from the root (retention, an operator) and a file it had
// not published yet is removed from staging. Recover must still start: it publishes the files
// that are there and reports each missing one (where it belonged, its rows), rather than fail
// at every start on a batch it can never finish.
func TestRecoverReportsTheMissingFilesOfACommittedBatch(t *testing.T) {
	w := newSegmentWriter(t, 1000)
	writeBatches(t, w, 2)
	SetAfterRename(w, func(renamed int) error {
		if renamed == 1 {
			return errors.New("killed")
		}
		return nil
	})
	_, err := w.Flush(true)
	require.ErrorIs(t, err, ErrCommitted)
	ReleaseOwner(w) // the process is gone

	staging := StagingOf(w)
	published := tree(t, w.Root())
	require.Len(t, published, 1, "the crash came after the first rename")
	require.NoError(t, os.Remove(filepath.Join(w.Root(), published[0])))
	batches := stagedDirs(t, staging, BatchPrefix)
	require.Len(t, batches, 1)
	var staged []string
	for _, f := range tree(t, filepath.Join(staging, batches[0])) {
		if f != "PUBLISH.json" {
			staged = append(staged, f)
		}
	}
	require.GreaterOrEqual(t, len(staged), 2, "files still to publish")
	require.NoError(t, os.Remove(filepath.Join(staging, batches[0], staged[0])))

	restarted, err := NewWriter(ConfigOf(w))
	require.NoError(t, err)
	rec, err := restarted.Recover(time.Now().Add(-15 * time.Minute))
	require.NoError(t, err, "files already gone must not keep the writer from starting")
	require.Len(t, rec.Missing, 2)
	assert.Equal(t, filepath.Join(w.Root(), published[0]), rec.Missing[0].Path, "the file published and removed since")
	for _, m := range rec.Missing {
		assert.Positive(t, m.Rows)
		assert.NoFileExists(t, m.Path)
	}
	assert.Len(t, rec.RolledForward, len(staged)-1, "the files that were there are published")
	for _, p := range rec.RolledForward {
		assert.FileExists(t, p.Path)
	}
	assert.Len(t, tree(t, w.Root()), len(staged)-1)

	// The merged segments went with the batch (their rows are in its files, published or
	// reported); the journal is kept aside, and no other file is left in staging.
	assert.Empty(t, stagedDirs(t, staging, SegmentPrefix))
	assert.Empty(t, stagedDirs(t, staging, BatchPrefix))
	left := tree(t, staging)
	require.Len(t, left, 1)
	assert.True(t, strings.HasPrefix(left[0], "missing-"+BatchPrefix) && strings.HasSuffix(left[0], "/PUBLISH.json"), left[0])

	res, err := restarted.Flush(true)
	require.NoError(t, err)
	assert.Empty(t, res.Files, "nothing is merged a second time")
	rec, err = restarted.Recover(time.Now())
	require.NoError(t, err)
	assert.Empty(t, rec.Missing, "reported once")
}
