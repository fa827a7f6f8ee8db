package dataset_test

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	. "github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/internal/testdataset/roundtrip"
	"github.com/reprise-dev/reprise/replaycase"
)

// newSegmentWriter stages batches as segments, merged when Flush is forced or after an hour.
func newSegmentWriter(t *testing.T, maxRowsPerFile int, opts ...Option) *Writer {
	t.Helper()
	base := t.TempDir()
	w, err := NewWriter(WriterConfig{
		Root: filepath.Join(base, "data"), Staging: filepath.Join(base, "data.staging"),
		Compression: "zstd", MaxRowsPerFile: maxRowsPerFile, RowGroupRows: 3,
		FileMaxAge: time.Hour, FileMaxStagedBytes: 1 << 30,
	}, opts...)
	require.NoError(t, err)
	_, err = w.Recover(time.Now().Add(-15 * time.Minute))
	require.NoError(t, err)
	return w
}

// writeBatches writes the fixture cases n times, each time with other case ids, and returns
// every case written by id.
func writeBatches(t *testing.T, w *Writer, n int) map[string]replaycase.Case {
	want := map[string]replaycase.Case{}
	for i := range n {
		cases := fixtureCases(t)
		for _, c := range cases {
			c.CaseID = replaycase.ID(c.Provenance.TraceID, string(rune('a'+i)))
			want[c.CaseID] = *c
		}
		res, err := w.Write(cases)
		require.NoError(t, err)
		assert.Empty(t, res.Files, "a staged batch publishes nothing")
	}
	return want
}

func TestSegmentsAreMergedIntoOneFilePerDataset(t *testing.T) {
	w := newSegmentWriter(t, 1000)
	want := writeBatches(t, w, 4)
	assert.Empty(t, tree(t, w.Root()), "nothing is visible before the merge")
	res, err := w.Flush(false)
	require.NoError(t, err)
	assert.Empty(t, res.Files, "not due: younger than FileMaxAge and smaller than FileMaxStagedBytes")

	res, err = w.Flush(true)
	require.NoError(t, err)
	require.Len(t, res.Files, 3, "one file per dataset and day")
	assert.Equal(t, []string{Steps, Quarantine, Cases}, []string{res.Files[0].Dataset, res.Files[1].Dataset, res.Files[2].Dataset}, "publish order")
	assert.Equal(t, []int{32, 4, 8}, []int{res.Files[0].Rows, res.Files[1].Rows, res.Files[2].Rows})
	assert.Empty(t, tree(t, StagingOf(w)), "the segments are gone")

	cases, _ := readDataset(t, w.Root(), Cases)
	quarantined, _ := readDataset(t, w.Root(), Quarantine)
	_, steps := readDataset(t, w.Root(), Steps)
	assert.Len(t, steps, 32)
	got := map[string]replaycase.Case{}
	for _, c := range append(cases, quarantined...) {
		got[c.CaseID] = c
	}
	require.Len(t, got, len(want))
	for id, c := range want {
		roundtrip.AssertSameCase(t, c, got[id])
	}

	// The merged file has the final profile: compressed, row groups of RowGroupRows, the
	// bloom filter on case_id, and ReadIndex/ReadCase work on it.
	f, err := os.Open(res.Files[2].Path)
	require.NoError(t, err)
	defer f.Close()
	info, _ := f.Stat()
	pf, err := parquet.OpenFile(f, info.Size())
	require.NoError(t, err)
	assert.Len(t, pf.RowGroups(), 3, "8 rows in row groups of 3")
	col := pf.Metadata().RowGroups[0].Columns[0]
	assert.Equal(t, "ZSTD", col.MetaData.Codec.String())
	assert.NotZero(t, col.MetaData.BloomFilterOffset, "case_id keeps its bloom filter")
	index, err := ReadIndex(res.Files[2].Path)
	require.NoError(t, err)
	require.Len(t, index, 8)
	c, err := ReadCase(res.Files[2].Path, index[7].Row)
	require.NoError(t, err)
	roundtrip.AssertSameCase(t, want[index[7].CaseID], *c)
}

func TestMergedFilesSplitAtMaxRowsPerFile(t *testing.T) {
	w := newSegmentWriter(t, 5)
	writeBatches(t, w, 3)
	res, err := w.Flush(true)
	require.NoError(t, err)
	rows := map[string][]int{}
	for _, f := range res.Files {
		rows[f.Dataset] = append(rows[f.Dataset], f.Rows)
	}
	assert.Equal(t, map[string][]int{Steps: {5, 5, 5, 5, 4}, Quarantine: {3}, Cases: {5, 1}}, rows)
}

func TestSegmentsAreMergedWhenDue(t *testing.T) {
	base := t.TempDir()
	w, err := NewWriter(WriterConfig{
		Root: filepath.Join(base, "data"), Staging: filepath.Join(base, "data.staging"),
		Compression: "zstd", MaxRowsPerFile: 1000, RowGroupRows: 100,
		FileMaxAge: time.Hour, FileMaxStagedBytes: 1, // every segment is over the size
	})
	require.NoError(t, err)
	res, err := w.Write(fixtureCases(t))
	require.NoError(t, err)
	assert.Empty(t, res.Files, "Write only stages")
	res, err = w.Flush(false)
	require.NoError(t, err)
	assert.Len(t, res.Files, 3, "the segments are over FileMaxStagedBytes")

	w, err = NewWriter(WriterConfig{
		Root: filepath.Join(base, "data"), Staging: filepath.Join(base, "data.staging"),
		Compression: "zstd", MaxRowsPerFile: 1000, RowGroupRows: 100,
		FileMaxAge: 50 * time.Millisecond, FileMaxStagedBytes: 1 << 30,
	})
	require.NoError(t, err)
	writeBatches(t, w, 1)
	time.Sleep(60 * time.Millisecond)
	res, err = w.Flush(false)
	require.NoError(t, err)
	assert.Len(t, res.Files, 3, "the oldest segment is FileMaxAge old")
}

func TestAFailedSegmentWriteRollsBackOnlyThatBatch(t *testing.T) {
	created := 0
	w := newSegmentWriter(t, 1000, WithCreateFile(func(path string) (StagedFile, error) {
		if created++; created == 5 { // the second batch's cases/ file
			return nil, syscall.ENOSPC
		}
		return os.Create(path)
	}))
	writeBatches(t, w, 1)
	_, err := w.Write(fixtureCases(t))
	require.Error(t, err)
	assert.NotErrorIs(t, err, ErrCommitted, "the caller must write this batch again")
	res, err := w.Flush(true)
	require.NoError(t, err)
	assert.Equal(t, 2, res.Files[2].Rows, "the committed segment is published, the failed batch is not")
}

func TestAMergeInterruptedByACrashIsFinishedOnRestartWithoutDuplicates(t *testing.T) {
	w := newSegmentWriter(t, 1000)
	want := writeBatches(t, w, 2)
	SetAfterRename(w, func(renamed int) error {
		if renamed == 1 {
			return errors.New("killed")
		}
		return nil
	})
	_, err := w.Flush(true)
	require.ErrorIs(t, err, ErrCommitted)

	restarted, err := NewWriter(ConfigOf(w))
	require.NoError(t, err)
	_, err = restarted.Recover(time.Now())
	require.NoError(t, err)
	res, err := restarted.Flush(true)
	require.NoError(t, err)
	assert.Empty(t, res.Files, "the merged segments went with the merge's journal")
	cases, _ := readDataset(t, w.Root(), Cases)
	quarantined, _ := readDataset(t, w.Root(), Quarantine)
	_, steps := readDataset(t, w.Root(), Steps)
	assert.Len(t, append(cases, quarantined...), len(want))
	assert.Len(t, steps, 16)
	assert.Empty(t, tree(t, StagingOf(w)))
}

func TestSegmentsOfACrashedWriterAreAdoptedOnceStale(t *testing.T) {
	crashed := newSegmentWriter(t, 1000)
	want := writeBatches(t, crashed, 2) // then the process dies: no Flush

	running, err := NewWriter(ConfigOf(crashed))
	require.NoError(t, err)
	_, err = running.Recover(time.Now().Add(-time.Hour))
	require.NoError(t, err)
	res, err := running.Flush(true)
	require.NoError(t, err)
	assert.Empty(t, res.Files, "segments younger than the stale age may belong to a running collector")

	restarted, err := NewWriter(ConfigOf(crashed))
	require.NoError(t, err)
	_, err = restarted.Recover(time.Now())
	require.NoError(t, err)
	other, err := NewWriter(ConfigOf(crashed))
	require.NoError(t, err)
	_, err = other.Recover(time.Now())
	require.NoError(t, err, "a second collector on the same staging directory finds them claimed")
	res, err = restarted.Flush(true)
	require.NoError(t, err)
	require.Len(t, res.Files, 3)
	res, err = other.Flush(true)
	require.NoError(t, err)
	assert.Empty(t, res.Files)
	cases, _ := readDataset(t, crashed.Root(), Cases)
	quarantined, _ := readDataset(t, crashed.Root(), Quarantine)
	assert.Len(t, append(cases, quarantined...), len(want), "every row once")
}

func TestSegmentsAreMergedAfterFileMaxAgeIsTurnedOff(t *testing.T) {
	crashed := newSegmentWriter(t, 1000)
	writeBatches(t, crashed, 1)
	cfg := ConfigOf(crashed)
	cfg.FileMaxAge = 0
	w, err := NewWriter(cfg)
	require.NoError(t, err)
	_, err = w.Recover(time.Now())
	require.NoError(t, err)
	res, err := w.Flush(false)
	require.NoError(t, err)
	assert.Len(t, res.Files, 3, "the adopted segment is due at once")
	assert.Empty(t, tree(t, StagingOf(w)))
}

// rawRows reads every file of a dataset under root with parquet-go alone (no span id copy put
// back), keyed by case id and, in steps/, the step's index.
func rawRows[T any](t *testing.T, root, dataset string, key func(T) string) map[string]T {
	files, err := NewLister(root, dataset).Next()
	require.NoError(t, err)
	out := map[string]T{}
	for _, f := range files {
		rows, err := parquet.ReadFile[T](f.Path)
		require.NoError(t, err)
		for _, r := range rows {
			out[key(r)] = r
		}
	}
	return out
}

// A merge copies the segments column by column, cutting row groups and files inside a
// segment's row groups; the rows it stores are the ones a direct write stores.
func TestMergedFilesHoldWhatADirectWriteHolds(t *testing.T) {
	base := t.TempDir()
	writer := func(name string, fileMaxAge time.Duration) *Writer {
		w, err := NewWriter(WriterConfig{
			Root: filepath.Join(base, name), Staging: filepath.Join(base, name+".staging"),
			Compression: "zstd", MaxRowsPerFile: 5, RowGroupRows: 3,
			FileMaxAge: fileMaxAge, FileMaxStagedBytes: 1 << 30,
		})
		require.NoError(t, err)
		return w
	}
	direct, merged := writer("direct", 0), writer("merged", time.Hour)
	for i := range 3 {
		for _, w := range []*Writer{direct, merged} {
			cases := everyFixtureCase(t)
			for _, c := range cases {
				c.CaseID = replaycase.ID(c.Provenance.TraceID, string(rune('a'+i)))
			}
			_, err := w.Write(cases)
			require.NoError(t, err)
		}
	}
	res, err := merged.Flush(true)
	require.NoError(t, err)
	require.Greater(t, len(res.Files), 3, "files split at MaxRowsPerFile")

	caseKey := func(c CaseRow) string { return c.CaseID }
	stepKey := func(s StepRow) string { return s.CaseID + "/" + strconv.Itoa(s.Index) }
	for _, dataset := range []string{Cases, Quarantine} {
		want := rawRows(t, direct.Root(), dataset, caseKey)
		require.NotEmpty(t, want)
		assert.Equal(t, want, rawRows(t, merged.Root(), dataset, caseKey), dataset)
	}
	want := rawRows(t, direct.Root(), Steps, stepKey)
	require.NotEmpty(t, want)
	assert.Equal(t, want, rawRows(t, merged.Root(), Steps, stepKey))
	assertFootersNameEveryColumn(t, direct.Root())
	assertFootersNameEveryColumn(t, merged.Root())
}

// assertFootersNameEveryColumn checks that every column chunk in the footers under root names
// its column (path_in_schema is required, and readers look columns up by it).
func assertFootersNameEveryColumn(t *testing.T, root string) {
	files, err := NewLister(root, Cases, Quarantine, Steps).Next()
	require.NoError(t, err)
	for _, f := range files {
		fh, err := os.Open(f.Path)
		require.NoError(t, err)
		info, err := fh.Stat()
		require.NoError(t, err)
		pf, err := parquet.OpenFile(fh, info.Size())
		require.NoError(t, err)
		columns := pf.Schema().Columns()
		for _, rg := range pf.Metadata().RowGroups {
			require.Len(t, rg.Columns, len(columns))
			for i, c := range rg.Columns {
				assert.Equal(t, columns[i], []string(c.MetaData.PathInSchema), f.Path)
			}
		}
		fh.Close()
	}
}
