package dataset_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	. "github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/replaycase"
)

// writeBatchAs stages the fixture cases as one batch, their ids made with tag, and returns them
// by id.
func writeBatchAs(t *testing.T, w *Writer, tag string) map[string]replaycase.Case {
	cases := fixtureCases(t)
	want := map[string]replaycase.Case{}
	for _, c := range cases {
		c.CaseID = replaycase.ID(c.Provenance.TraceID, tag)
		want[c.CaseID] = *c
	}
	_, err := w.Write(cases)
	require.NoError(t, err)
	return want
}

// Every Flush merges every staged segment, so a segment that cannot be read would keep every
// later segment from being published, for ever. It is set aside in staging instead (not
// deleted: its rows were acknowledged), reported, and the others are published.
func TestAnUnreadableSegmentIsSetAsideAndTheOthersPublished(t *testing.T) {
	w := newSegmentWriter(t, 1000)
	badCases := writeBatchAs(t, w, "bad")
	wantRows := map[string]int{}
	for _, c := range badCases {
		wantRows[DatasetOf(&c)]++
	}
	staging := StagingOf(w)
	segs := stagedDirs(t, staging, SegmentPrefix)
	require.Len(t, segs, 1)
	bad := segs[0]
	files, err := os.ReadDir(filepath.Join(staging, bad))
	require.NoError(t, err)
	var badFiles []string
	for _, f := range files {
		badFiles = append(badFiles, f.Name())
		if strings.HasPrefix(f.Name(), Cases+"-") {
			require.NoError(t, os.Truncate(filepath.Join(staging, bad, f.Name()), 100))
		}
	}

	want := writeBatchAs(t, w, "good")
	res, err := w.Flush(true)
	require.NoError(t, err)
	require.Len(t, res.Unreadable, 1)
	aside := filepath.Join(staging, UnreadablePrefix+bad)
	assert.Equal(t, aside, res.Unreadable[0].Path)
	assert.Error(t, res.Unreadable[0].Err)
	assert.Equal(t, wantRows, res.Unreadable[0].Rows, "its rows, by dataset, from its journal")
	assert.Len(t, res.Files, 3, "the readable segment is published")
	steps := assertEachCaseOnce(t, w.Root(), want)
	assert.Equal(t, 8, steps)

	after, err := os.ReadDir(aside)
	require.NoError(t, err, "set aside, not deleted")
	var kept []string
	for _, f := range after {
		kept = append(kept, f.Name())
	}
	assert.ElementsMatch(t, badFiles, kept, "every file of the unreadable segment is kept")

	more := writeBatchAs(t, w, "later")
	res, err = w.Flush(true)
	require.NoError(t, err)
	assert.Empty(t, res.Unreadable, "set aside once")
	assert.Len(t, res.Files, 3, "later segments are published")
	byID, _ := publishedRows(t, w.Root())
	assert.Len(t, byID, len(want)+len(more))
	assert.DirExists(t, aside)
	assert.Empty(t, stagedDirs(t, staging, SegmentPrefix))
}

// A merge that fails on something other than a segment (here, a file it cannot create) sets
// nothing aside: the segments stay staged for the next Flush.
func TestAMergeFailureNotASegmentsSetsNothingAside(t *testing.T) {
	w := newSegmentWriter(t, 1000)
	want := writeBatchAs(t, w, "a")
	failCreate := true
	w2, err := NewWriter(ConfigOf(w), WithCreateFile(func(path string) (StagedFile, error) {
		if failCreate {
			return nil, os.ErrPermission
		}
		return os.Create(path)
	}))
	require.NoError(t, err)
	ReleaseOwner(w)
	_, err = w2.Recover(time.Now())
	require.NoError(t, err)
	_, err = w2.Flush(true)
	require.ErrorIs(t, err, os.ErrPermission)
	assert.Empty(t, stagedDirs(t, StagingOf(w), UnreadablePrefix))
	assert.Len(t, stagedDirs(t, StagingOf(w), SegmentPrefix), 1)

	failCreate = false
	res, err := w2.Flush(true)
	require.NoError(t, err)
	assert.Len(t, res.Files, 3)
	byID, _ := publishedRows(t, w.Root())
	assert.Len(t, byID, len(want))
}
