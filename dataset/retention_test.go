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
	"github.com/reprise-dev/reprise/replaycase"
)

// writeDays writes the fixture cases once per day, each copy with its own case ids, and ages
// every published file so that only partition age decides.
func writeDays(t *testing.T, w *Writer, days ...string) {
	for _, d := range days {
		start, err := time.Parse(time.DateOnly, d)
		require.NoError(t, err)
		cases := fixtureCases(t)
		for _, c := range cases {
			c.CaseID = replaycase.ID(c.Provenance.TraceID, d+c.CaseID)
			c.StartTime = start.Add(time.Hour)
		}
		_, err = w.Write(cases)
		require.NoError(t, err)
	}
	old := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, f := range tree(t, w.Root()) {
		require.NoError(t, os.Chtimes(filepath.Join(w.Root(), f), old, old))
	}
}

func partitions(t *testing.T, root string) []string {
	var out []string
	for _, f := range tree(t, root) {
		parts := strings.Split(f, "/")
		if len(parts) == 3 && !contains(out, parts[0]+"/"+parts[1]) {
			out = append(out, parts[0]+"/"+parts[1])
		}
	}
	return out
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func TestExpireRemovesOnlyExpiredPartitions(t *testing.T) {
	w := newWriter(t)
	writeDays(t, w, "2026-01-01", "2026-05-31", "2026-06-01", "2026-11-01")
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC) // 2026-05-31 expired at 00:00 today, 2026-06-01 tomorrow
	got, err := Expire(w.Root(), Retention{Cases: 180 * 24 * time.Hour, Quarantine: 30 * 24 * time.Hour}, now)
	require.NoError(t, err)

	assert.ElementsMatch(t, []string{
		"cases/dt=2026-11-01", "quarantine/dt=2026-11-01", "steps/dt=2026-11-01",
		"cases/dt=2026-06-01", "steps/dt=2026-06-01",
	}, partitions(t, w.Root()))
	for _, dir := range []string{"cases/dt=2026-01-01", "steps/dt=2026-05-31", "quarantine/dt=2026-06-01"} {
		assert.NoDirExists(t, filepath.Join(w.Root(), dir), "an expired partition goes, directory and all")
	}
	var files int
	for _, e := range got {
		files += e.Files
		assert.Positive(t, e.Bytes)
		assert.Zero(t, e.Kept)
	}
	// Removed: cases+steps of two days, quarantine of three; one file each.
	assert.Equal(t, 7, files)

	// What is left still reads.
	for _, f := range tree(t, w.Root()) {
		if strings.HasPrefix(f, "cases/") {
			rows, err := ReadCases(filepath.Join(w.Root(), f))
			require.NoError(t, err)
			assert.Len(t, rows, 2)
		}
	}

	again, err := Expire(w.Root(), Retention{Cases: 180 * 24 * time.Hour, Quarantine: 30 * 24 * time.Hour}, now)
	require.NoError(t, err)
	assert.Empty(t, again, "a second pass finds nothing to do")
}

func TestExpireIsOffForAZeroAge(t *testing.T) {
	w := newWriter(t)
	writeDays(t, w, "2020-01-01")
	before := tree(t, w.Root())
	got, err := Expire(w.Root(), Retention{}, time.Now())
	require.NoError(t, err)
	assert.Empty(t, got)
	assert.Equal(t, before, tree(t, w.Root()))
}

// A file just published into an old partition (a re-drive, a roll-forward after a crash) stays
// until it is older than MinFileAge; so does its directory, and so do the day's steps files
// while the fresh cases file is there.
func TestExpireKeepsFilesJustPublished(t *testing.T) {
	w := newWriter(t)
	writeDays(t, w, "2020-01-01")
	cases := fixtureCases(t)
	for _, c := range cases {
		c.StartTime = time.Date(2020, 1, 1, 5, 0, 0, 0, time.UTC)
	}
	_, err := w.Write(cases) // published now
	require.NoError(t, err)

	got, err := Expire(w.Root(), Retention{Cases: 24 * time.Hour, Quarantine: 24 * time.Hour}, time.Now())
	require.NoError(t, err)
	assert.ElementsMatch(t, []Expired{
		{Dataset: Cases, Partition: "2020-01-01", Files: 1, Bytes: got[0].Bytes, Kept: 1},
		{Dataset: Steps, Partition: "2020-01-01", KeptForCases: 2},
		{Dataset: Quarantine, Partition: "2020-01-01", Files: 1, Bytes: got[2].Bytes, Kept: 1},
	}, got, "the aged cases and quarantine files go; the fresh ones stay, and every steps file with the fresh case")
	assert.Len(t, tree(t, w.Root()), 4)
}

func TestExpireLeavesWhatItDoesNotKnow(t *testing.T) {
	w := newWriter(t)
	writeDays(t, w, "2020-01-01")
	notes := filepath.Join(w.Root(), "cases", "dt=2020-01-01", "README.txt")
	odd := filepath.Join(w.Root(), "cases", "dt=someday", "part.parquet")
	require.NoError(t, os.WriteFile(notes, []byte("keep"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Dir(odd), 0o755))
	require.NoError(t, os.WriteFile(odd, []byte("x"), 0o644))

	_, err := Expire(w.Root(), Retention{Cases: time.Hour}, time.Now())
	require.NoError(t, err)
	assert.FileExists(t, notes)
	assert.FileExists(t, odd)
	assert.NoDirExists(t, filepath.Join(w.Root(), "steps", "dt=2020-01-01"))
}

func TestExpireDeadLettersByAge(t *testing.T) {
	w := newWriter(t)
	oldPath, _, err := w.DeadLetter("old", []byte("batch"))
	require.NoError(t, err)
	newPath, _, err := w.DeadLetter("new", []byte("batch"))
	require.NoError(t, err)
	old := time.Now().Add(-15 * 24 * time.Hour)
	require.NoError(t, os.Chtimes(oldPath, old, old))

	got, err := Expire(w.Root(), Retention{Failed: 14 * 24 * time.Hour}, time.Now())
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, Expired{Dataset: Failed, Files: 1, Bytes: 5}, got[0])
	assert.NoFileExists(t, oldPath)
	assert.FileExists(t, newPath)
}

func TestPartitionExpired(t *testing.T) {
	day := 24 * time.Hour
	now := time.Date(2026, 3, 11, 0, 0, 0, 0, time.UTC)
	assert.True(t, PartitionExpired("2026-03-01", 9*day, now), "ended 2026-03-02, plus 9 days is now")
	assert.False(t, PartitionExpired("2026-03-02", 9*day, now))
	assert.False(t, PartitionExpired("not-a-day", day, now))
}

// With an object store mirroring the root, an expired file goes only once the bucket holds it
// (Retention.Uploaded names it); the others stay, with their directory, and are counted; a
// bucket that cannot be asked keeps the whole partition and the error names it.
func TestExpireKeepsFilesTheObjectStoreDoesNotHold(t *testing.T) {
	w := newWriter(t)
	writeDays(t, w, "2020-01-01")
	before := tree(t, w.Root())
	require.Len(t, before, 3, "one cases, steps and quarantine file")
	var asked []string
	uploaded := func(ds, dt string) (map[string]bool, error) {
		asked = append(asked, ds+"/"+dt)
		if ds == Quarantine {
			return nil, errors.New("AccessDenied (test)")
		}
		held := map[string]bool{}
		for _, f := range before {
			if parts := strings.Split(f, "/"); parts[0] == Cases { // the steps file is not uploaded yet
				held[parts[2]] = true
			}
		}
		return held, nil
	}

	got, err := Expire(w.Root(), Retention{Cases: time.Hour, Quarantine: time.Hour, Uploaded: uploaded}, time.Now())
	require.ErrorContains(t, err, "expiring quarantine/dt=2020-01-01: asking the object store which files it holds")
	require.ErrorContains(t, err, "AccessDenied (test)")
	assert.ElementsMatch(t, []string{"cases/2020-01-01", "steps/2020-01-01", "quarantine/2020-01-01"}, asked, "once per partition")
	byDataset := map[string]Expired{}
	for _, e := range got {
		byDataset[e.Dataset] = e
	}
	assert.Equal(t, 1, byDataset[Cases].Files, "the uploaded file goes")
	assert.Equal(t, 0, byDataset[Cases].NotUploaded)
	assert.Equal(t, Expired{Dataset: Steps, Partition: "2020-01-01", NotUploaded: 1}, byDataset[Steps])
	assert.Equal(t, Expired{Dataset: Quarantine, Partition: "2020-01-01", NotUploaded: 1}, byDataset[Quarantine])
	assert.Len(t, tree(t, w.Root()), 2, "the steps and quarantine files stay")
	assert.NoDirExists(t, filepath.Join(w.Root(), Cases, "dt=2020-01-01"))
}

// A partition directory removed while the dataset is listed (retention emptied it between the
// listing of the dataset and that of the partition) is not a listing error: the readers that
// list (reprise ls, show, ci, the replay_parquet receiver, the replay extension) list what is
// there, as for a dataset directory not created yet. It failed the whole listing.
func TestListerSkipsAPartitionRemovedMeanwhile(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, Cases, "dt=2020-01-01")
	stop, done := make(chan struct{}), make(chan struct{})
	go func() { // retention removing an empty partition, again and again
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			_ = os.MkdirAll(dir, 0o755)
			_ = os.Remove(dir)
		}
	}()
	defer func() { close(stop); <-done }()
	for range 5000 {
		files, err := NewLister(root, Cases).Next()
		require.NoError(t, err)
		require.Empty(t, files)
	}
}

// A day's steps/ files go only once its cases/ files are gone: a cases file that stays (its
// upload failed or the bucket could not be asked, it was published just now, its removal
// failed) keeps the day's steps files, so a reader never sees a kept case without its steps.
// The steps files stay, counted in KeptForCases, and go at a pass after the cases file. Each
// way below failed before: the steps file was expired on its own.
func TestExpireKeepsStepsWhileTheirCasesStay(t *testing.T) {
	for name, setup := range map[string]func(t *testing.T, root string, r *Retention){
		"the bucket cannot be asked for the cases": func(t *testing.T, root string, r *Retention) {
			r.Uploaded = func(ds, dt string) (map[string]bool, error) {
				if ds == Cases {
					return nil, errors.New("SlowDown (test)")
				}
				return namesIn(t, root, ds, dt), nil
			}
		},
		"the cases file is not uploaded yet": func(t *testing.T, root string, r *Retention) {
			r.Uploaded = func(ds, dt string) (map[string]bool, error) {
				if ds == Cases {
					return map[string]bool{}, nil
				}
				return namesIn(t, root, ds, dt), nil
			}
		},
		"the cases file was published a moment after its steps": func(t *testing.T, root string, r *Retention) {
			// Publishing renames steps/ first: at a pass in between, the steps file is old
			// enough to go and the cases file is not.
			now := time.Now()
			for _, f := range tree(t, root) {
				if strings.HasPrefix(f, Cases+"/") {
					require.NoError(t, os.Chtimes(filepath.Join(root, f), now, now))
				}
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			w := newWriter(t)
			writeDays(t, w, "2020-01-01")
			r := Retention{Cases: time.Hour}
			setup(t, w.Root(), &r)

			got, _ := Expire(w.Root(), r, time.Now()) // a failed ask is reported: not what is tested here
			left := tree(t, w.Root())
			require.Contains(t, strings.Join(left, " "), Cases+"/dt=2020-01-01/", "the cases file stays")
			assert.Contains(t, strings.Join(left, " "), Steps+"/dt=2020-01-01/", "and so do its steps")
			steps := Expired{Dataset: Steps, Partition: "2020-01-01", KeptForCases: 1}
			assert.Contains(t, got, steps, "counted as kept for its cases, the bucket not asked for it")

			// Once the cases file goes, a later pass takes the steps too.
			old := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
			for _, f := range tree(t, w.Root()) {
				require.NoError(t, os.Chtimes(filepath.Join(w.Root(), f), old, old))
			}
			_, err := Expire(w.Root(), Retention{Cases: time.Hour}, time.Now())
			require.NoError(t, err)
			for _, f := range tree(t, w.Root()) {
				assert.True(t, strings.HasPrefix(f, Quarantine+"/"), "%s is left", f)
			}
		})
	}
}

// namesIn is what a bucket holding every file of root's partition ds/dt=dt would name.
func namesIn(t *testing.T, root, ds, dt string) map[string]bool {
	out := map[string]bool{}
	for _, f := range tree(t, root) {
		if parts := strings.Split(f, "/"); parts[0] == ds && parts[1] == PartitionKey+"="+dt {
			out[parts[2]] = true
		}
	}
	return out
}

// A batch rolled forward after a crash is just published, however long ago it was staged (the
// collector down for the night): retention keeps it its hour, as any file just published. A
// rename keeps the staged file's time, and a rolled-forward batch of an expired day went at
// the first pass after the restart.
func TestExpireKeepsABatchRolledForwardAfterALongOutage(t *testing.T) {
	crashed := newWriter(t)
	cases := fixtureCases(t)
	for _, c := range cases {
		c.StartTime = time.Date(2020, 1, 1, 5, 0, 0, 0, time.UTC)
	}
	SetAfterRename(crashed, func(renamed int) error {
		if renamed == 1 {
			return errors.New("killed") // steps/ is published, quarantine/ and cases/ are not
		}
		return nil
	})
	_, err := crashed.Write(cases)
	require.ErrorIs(t, err, ErrCommitted)
	overnight := time.Now().Add(-8 * time.Hour)
	require.NoError(t, filepath.WalkDir(StagingOf(crashed), func(path string, _ os.DirEntry, err error) error {
		if err == nil {
			err = os.Chtimes(path, overnight, overnight)
		}
		return err
	}))
	restarted, err := NewWriter(ConfigOf(crashed))
	require.NoError(t, err)
	rec, err := restarted.Recover(time.Now().Add(-time.Hour))
	require.NoError(t, err)
	require.Len(t, rec.RolledForward, 3)

	got, err := Expire(restarted.Root(), Retention{Cases: 24 * time.Hour, Quarantine: 24 * time.Hour}, time.Now())
	require.NoError(t, err)
	for _, e := range got {
		assert.Zero(t, e.Files, "%s/dt=%s: a file rolled forward at the restart was deleted", e.Dataset, e.Partition)
	}
	cases2, _ := readDataset(t, restarted.Root(), Cases)
	assert.Len(t, cases2, 2)
}
