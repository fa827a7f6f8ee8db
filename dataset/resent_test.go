package dataset_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	. "github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/replaycase"
)

// A collector killed after its exporter staged a batch and before its processor released the
// batch's write-ahead records sends the cases again after the restart, marked Resent. The
// restarted writer adopted the killed one's segment, which holds them: each is written once.
// An unmarked case under an adopted id is a re-drive and is written (a newer row, on purpose),
// and a marked case no adopted segment holds (the crash came before the write) is written too.
func TestACaseSentAgainAfterACrashIsWrittenOnce(t *testing.T) {
	crashed := newSegmentWriter(t, 1000)
	written := fixtureCases(t)
	_, err := crashed.Write(written)
	require.NoError(t, err)
	ReleaseOwner(crashed) // killed: no Flush

	restarted, err := NewWriter(ConfigOf(crashed))
	require.NoError(t, err)
	_, err = restarted.Recover(time.Now().Add(-15 * time.Minute))
	require.NoError(t, err)

	again := fixtureCases(t)
	var resent []string
	for _, c := range again {
		c.Resent = true
		resent = append(resent, c.CaseID)
	}
	redriven := fixtureCases(t)[0] // the same case_id, not marked
	fresh := fixtureCases(t)[1]
	fresh.CaseID = replaycase.ID(fresh.Provenance.TraceID, "never written")
	fresh.Resent = true
	grown := fixtureCases(t)[2] // marked, but built from a span more: one that came late
	grown.Resent = true
	grown.Provenance.SpanCount++
	resent = slices.DeleteFunc(resent, func(id string) bool { return id == grown.CaseID })
	res, err := restarted.Write(append(slices.DeleteFunc(again, func(c *replaycase.Case) bool { return c.CaseID == grown.CaseID }), redriven, fresh, grown))
	require.NoError(t, err)
	assert.ElementsMatch(t, resent, res.Resent, "the cases dropped as written before the crash")
	_, err = restarted.Flush(true)
	require.NoError(t, err)

	byID, _ := publishedRows(t, restarted.Root())
	for _, c := range written {
		want := 1
		if c.CaseID == redriven.CaseID || c.CaseID == grown.CaseID {
			want = 2 // a re-drive, and a case that holds more than the written copy
		}
		assert.Equal(t, want, byID[c.CaseID], "case %s", c.CaseID)
	}
	assert.Equal(t, 1, byID[fresh.CaseID], "a marked case no adopted segment holds is written")
	assert.Len(t, byID, len(written)+1)
}

// A copy published before the crash, directly (file_max_age 0) or merged from segments, is in
// no segment the restarted writer adopts: the writer reads the case ids of the files published
// within the hour the first time a marked case is not in an adopted segment. A marked case
// held so is dropped; a marked case built from a span more, and an unmarked one, are written.
func TestACaseSentAgainAfterACrashIsWrittenOnceWhenItsCopyWasPublished(t *testing.T) {
	for name, crashed := range map[string]func(t *testing.T) *Writer{
		"published directly": func(t *testing.T) *Writer {
			w := newWriter(t)
			_, err := w.Write(fixtureCases(t))
			require.NoError(t, err)
			return w
		},
		"merged and published": func(t *testing.T) *Writer {
			w := newSegmentWriter(t, 1000)
			_, err := w.Write(fixtureCases(t))
			require.NoError(t, err)
			_, err = w.Flush(true)
			require.NoError(t, err)
			require.NoError(t, w.Close())
			return w
		},
	} {
		t.Run(name, func(t *testing.T) {
			restarted := restart(t, crashed(t))
			again := markedResent(fixtureCases(t))
			again[2].Provenance.SpanCount++ // one that came late, after the copy was written
			redriven := fixtureCases(t)[0]  // the same case_id, not marked
			ids := []string{again[0].CaseID, again[1].CaseID, again[2].CaseID}
			res, err := restarted.Write(slices.Concat(again, []*replaycase.Case{redriven}))
			require.NoError(t, err)
			assert.ElementsMatch(t, ids[:2], res.Resent)
			_, err = restarted.Flush(true)
			require.NoError(t, err)

			byID, _ := publishedRows(t, restarted.Root())
			assert.Equal(t, map[string]int{ids[0]: 2, ids[1]: 1, ids[2]: 2}, byID,
				"the re-drive and the grown case are written again, the other once")
		})
	}
}

// Only the files published within the hour before the last one the crashed writer published
// are read: a copy published earlier (its file's modification time) is not known, and the
// case is written again. A file that cannot be read is skipped, the others read: its cases, sent again, are
// written again.
func TestOnlyFilesPublishedWithinTheHourAreReadForCasesSentAgain(t *testing.T) {
	old := newWriter(t)
	_, err := old.Write(fixtureCases(t))
	require.NoError(t, err)
	files, err := NewLister(old.Root(), Cases, Quarantine).Next()
	require.NoError(t, err)
	for _, f := range files {
		hourAgo := time.Now().Add(-time.Hour - time.Minute)
		require.NoError(t, os.Chtimes(f.Path, hourAgo, hourAgo))
	}
	last := fixtureCases(t)[0] // the crash's last file, an hour and a minute after the others
	last.CaseID = "0123456789abcdef0123456789abcdef"
	_, err = old.Write([]*replaycase.Case{last})
	require.NoError(t, err)
	res, err := restart(t, old).Write(markedResent(fixtureCases(t)))
	require.NoError(t, err)
	assert.Empty(t, res.Resent, "published more than an hour before the last file")
	byID, _ := publishedRows(t, old.Root())
	delete(byID, last.CaseID)
	for id, n := range byID {
		assert.Equal(t, 2, n, "case %s", id)
	}

	recent := newWriter(t)
	written := fixtureCases(t)
	_, err = recent.Write(written)
	require.NoError(t, err)
	files, err = NewLister(recent.Root(), Cases).Next()
	require.NoError(t, err)
	garbage := filepath.Join(filepath.Dir(files[0].Path), "0-not-parquet.parquet") // listed first
	require.NoError(t, os.WriteFile(garbage, []byte("not a parquet file"), 0o644))
	res, err = restart(t, recent).Write(markedResent(fixtureCases(t)))
	require.NoError(t, err)
	assert.Len(t, res.Resent, len(written), "the readable files are read")
	require.NoError(t, os.Remove(garbage))
	byID, _ = publishedRows(t, recent.Root())
	assert.Len(t, byID, len(written))
	for id, n := range byID {
		assert.Equal(t, 1, n, "case %s", id)
	}
}

// restart is a collector started again after crashed was killed: a new writer on its root and
// staging, recovered.
func restart(t *testing.T, crashed *Writer) *Writer {
	t.Helper()
	ReleaseOwner(crashed)
	w, err := NewWriter(ConfigOf(crashed))
	require.NoError(t, err)
	_, err = w.Recover(time.Now().Add(-15 * time.Minute))
	require.NoError(t, err)
	return w
}

// markedResent marks cases Resent, as the processor sends them after a restart.
func markedResent(cases []*replaycase.Case) []*replaycase.Case {
	for _, c := range cases {
		c.Resent = true
	}
	return cases
}

// Tier 2 (docs/scale-out.md), killed between the hand-off of a batch to the persistent queue and
// the release of its write-ahead records: the queue delivers its copies after the restart, the
// processor sends the cases again later, marked. A marked case the processor sends at once on
// its restart (one it cut at max_spans_per_trace or closed early past max_open_traces, never
// written) made the writer read the published files before the queue's copies were written:
// the marked cases sent after those copies were written a second time.
func TestACaseSentAgainAfterItsQueuedCopyWasWrittenIsWrittenOnce(t *testing.T) {
	restarted := skippingRedelivered(t, newWriter(t)) // tier 2: the exporter has a persistent queue
	first := fixtureCases(t)[0]
	first.CaseID = replaycase.ID(first.Provenance.TraceID, "never written")
	res, err := restarted.Write(markedResent([]*replaycase.Case{first}))
	require.NoError(t, err)
	assert.Empty(t, res.Resent, "its copy is nowhere: written")

	_, err = restarted.Write(fixtureCases(t)) // the queue's copies, delivered after the restart
	require.NoError(t, err)
	again := markedResent(fixtureCases(t))
	again[2].Provenance.SpanCount++ // one that came late, after the copy was written
	ids := []string{again[0].CaseID, again[1].CaseID, again[2].CaseID}
	res, err = restarted.Write(again)
	require.NoError(t, err)
	assert.ElementsMatch(t, ids[:2], res.Resent)

	byID, _ := publishedRows(t, restarted.Root())
	assert.Equal(t, map[string]int{first.CaseID: 1, ids[0]: 1, ids[1]: 1, ids[2]: 2}, byID,
		"the grown case is written again, the others once")
}

// The copies a crash left were published in its last minutes, however long the collector
// stayed down: after a night's outage, the files published before the crash, and the batch it
// left half published (rolled forward by Recover at the restart, a rename that keeps the time
// the files were staged), were read as published hours ago, the copies not known, and the
// cases sent again written twice.
func TestACaseSentAgainAfterALongOutageIsWrittenOnce(t *testing.T) {
	cases := fixtureCases(t)
	crashed := newWriter(t)
	_, err := crashed.Write(cases[:1])
	require.NoError(t, err)
	SetAfterRename(crashed, func(renamed int) error {
		if renamed == 1 {
			return errors.New("killed") // steps/ is published, quarantine/ and cases/ are not
		}
		return nil
	})
	_, err = crashed.Write(cases[1:])
	require.ErrorIs(t, err, ErrCommitted)
	overnight := time.Now().Add(-8 * time.Hour)
	for _, dir := range []string{crashed.Root(), StagingOf(crashed)} {
		require.NoError(t, filepath.WalkDir(dir, func(path string, _ os.DirEntry, err error) error {
			if err == nil {
				err = os.Chtimes(path, overnight, overnight)
			}
			return err
		}))
	}

	restarted := restart(t, crashed)
	res, err := restarted.Write(markedResent(fixtureCases(t)))
	require.NoError(t, err)
	assert.Len(t, res.Resent, len(cases), "the files of the crash's last hour hold every case")
	byID, _ := publishedRows(t, restarted.Root())
	assert.Len(t, byID, len(cases))
	for id, n := range byID {
		assert.Equal(t, 1, n, "case %s", id)
	}
}
