package dataset_test

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	. "github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/internal/testdataset"
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
	pf := testdataset.OpenParquet(t, res.Files[2].Path)
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
		if created++; created == 4 { // the second batch's cases/ file (a segment holds quarantine/, cases/)
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
	ForgetOwner(crashed)                // and nothing tells it is gone: the age rule

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
	ReleaseOwner(crashed) // the process is gone
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

// storedRows reads every file of a dataset under root with parquet-go alone, as rows of values
// with their levels (a NULL is not an empty string there), keyed by case id and, in steps/, the
// step's index.
func storedRows(t *testing.T, root, dataset string) map[string]parquet.Row {
	files, err := NewLister(root, dataset).Next()
	require.NoError(t, err)
	out := map[string]parquet.Row{}
	for _, f := range files {
		pf := testdataset.OpenParquet(t, f.Path)
		index, isSteps := pf.Schema().Lookup("index")
		for _, row := range parquetRows(t, pf) {
			key := row[0].String() // case_id, the first column
			if isSteps {
				for _, v := range row {
					if v.Column() == index.ColumnIndex {
						key += "/" + v.String()
					}
				}
			}
			require.NotContains(t, out, key, "%s: one row per key", f.Path)
			out[key] = row
		}
	}
	return out
}

// assertSameRows checks that two dataset roots hold the same rows of a dataset, value for value
// and level for level.
func assertSameRows(t *testing.T, wantRoot, gotRoot, dataset string) {
	t.Helper()
	want, got := storedRows(t, wantRoot, dataset), storedRows(t, gotRoot, dataset)
	require.NotEmpty(t, want, dataset)
	assert.Len(t, got, len(want), dataset)
	for key, row := range want {
		require.Contains(t, got, key, dataset)
		assert.True(t, row.Equal(got[key]), "%s %s: %s", dataset, key, rowDiff(row, got[key]))
	}
}

// assertStepIDsNULL checks that no steps/ row under root stores a trace id or a span id.
func assertStepIDsNULL(t *testing.T, root string) {
	t.Helper()
	schema := parquet.SchemaOf(StepRow{})
	var ids []int
	for _, path := range [][]string{{"trace_id"}, {"span_id"}, {"parent_span_id"}, {"tool_call", "span_id"}, {"tool_call", "requested_by"}, {"retrieval", "span_id"}} {
		leaf, ok := schema.Lookup(path...)
		require.True(t, ok, "%v", path)
		ids = append(ids, leaf.ColumnIndex)
	}
	for key, row := range storedRows(t, root, Steps) {
		for _, v := range row {
			if slices.Contains(ids, v.Column()) {
				assert.True(t, v.IsNull(), "%s: column %d holds %v", key, v.Column(), v)
			}
		}
	}
}

// mergeTestWriter writes into base/name with small files and small row groups, so that merges
// cut row groups and files inside segments' row groups.
func mergeTestWriter(t *testing.T, base, name string, fileMaxAge time.Duration) *Writer {
	return sizedWriter(t, base, name, fileMaxAge, 5, 3)
}

// sizedWriter writes into base/name, zstd, in files of maxRowsPerFile rows and row groups of
// rowGroupRows, staging up to 1 GiB until fileMaxAge.
func sizedWriter(t testing.TB, base, name string, fileMaxAge time.Duration, maxRowsPerFile, rowGroupRows int) *Writer {
	w, err := NewWriter(WriterConfig{
		Root: filepath.Join(base, name), Staging: filepath.Join(base, name+".staging"),
		Compression: "zstd", MaxRowsPerFile: maxRowsPerFile, RowGroupRows: rowGroupRows,
		FileMaxAge: fileMaxAge, FileMaxStagedBytes: 1 << 30,
	})
	require.NoError(t, err)
	return w
}

// mergeTestBatch is batch i of a merge test: the fixture cases with their own ids, plus, by i,
// an accepted case whose ids the layout rules do not fit (1), or an accepted case with every
// field set and one without steps (2).
func mergeTestBatch(t *testing.T, i int) []*replaycase.Case {
	cases := everyFixtureCase(t)
	var accepted *replaycase.Case
	for _, c := range cases {
		c.CaseID = replaycase.ID(c.Provenance.TraceID, string(rune('a'+i)))
		if DatasetOf(c) == Cases && len(c.Steps) > 1 {
			accepted = c
		}
	}
	require.NotNil(t, accepted)
	switch i {
	case 1:
		require.True(t, breakRule(accepted))
	case 2:
		full := &replaycase.Case{}
		require.Greater(t, FillEveryField(full), 100)
		full.CaseID, full.Status = "every-field", replaycase.StatusAccepted
		noSteps := *accepted
		noSteps.CaseID, noSteps.Steps = "no-steps", nil
		cases = append(cases, full, &noSteps)
	}
	return cases
}

// A merge copies the segments column by column, cutting row groups and files inside a
// segment's row groups, and makes steps/ from the segments' cases/; the rows it stores are the
// ones a direct write stores, NULLs included, whatever the layout of span ids (ids_stored_once.go)
// and whether a segment holds steps/ files (an earlier build's) or not. So are the rows of
// batches published at once (no FileMaxAge), each through a segment merged by Write itself,
// which leaves nothing in staging.
func TestMergedFilesHoldWhatADirectWriteHolds(t *testing.T) {
	base := t.TempDir()
	direct, merged := mergeTestWriter(t, base, "direct", 0), mergeTestWriter(t, base, "merged", time.Hour)
	published := mergeTestWriter(t, base, "published", 0)
	for i := range 4 {
		require.NoError(t, WriteDeconstructed(direct, mergeTestBatch(t, i)))
		res, err := published.Write(mergeTestBatch(t, i))
		require.NoError(t, err)
		assert.Greater(t, len(res.Files), 2, "published by Write, split at MaxRowsPerFile")
		assert.Empty(t, tree(t, StagingOf(published)), "the batch's segment is gone once its files are published")
		if i == 3 {
			require.NoError(t, WriteSegmentWithSteps(merged, mergeTestBatch(t, i)))
			continue
		}
		_, err = merged.Write(mergeTestBatch(t, i))
		require.NoError(t, err)
	}
	var withSteps []string // segments that stage steps/ files
	for _, f := range tree(t, StagingOf(merged)) {
		if segment, name, _ := strings.Cut(f, "/"); strings.HasPrefix(name, Steps+"-") {
			withSteps = append(withSteps, segment)
		}
	}
	assert.Len(t, slices.Compact(withSteps), 1, "only the earlier build's segment stages steps/")
	res, err := merged.Flush(true)
	require.NoError(t, err)
	require.Greater(t, len(res.Files), 3, "files split at MaxRowsPerFile")

	for _, dataset := range []string{Cases, Quarantine, Steps} {
		assertSameRows(t, direct.Root(), merged.Root(), dataset)
		assertSameRows(t, direct.Root(), published.Root(), dataset)
	}
	assert.Contains(t, storedRows(t, merged.Root(), Steps), "every-field/0")
	for _, w := range []*Writer{direct, merged, published} {
		assertStepIDsNULL(t, w.Root())
		assertFootersNameEveryColumn(t, w.Root())
	}
}

// A collector of an earlier build left segments with steps/ files; the merge of this build
// adopts them and merges them with its own, and stores each row once.
func TestSegmentsWithStepsOfAnEarlierBuildAreAdopted(t *testing.T) {
	base := t.TempDir()
	direct, earlier := mergeTestWriter(t, base, "direct", 0), mergeTestWriter(t, base, "merged", time.Hour)
	for i := range 2 {
		require.NoError(t, WriteDeconstructed(direct, mergeTestBatch(t, i)))
		require.NoError(t, WriteSegmentWithSteps(earlier, mergeTestBatch(t, i)))
	}
	staged := tree(t, StagingOf(earlier))
	assert.True(t, slices.ContainsFunc(staged, func(f string) bool { return strings.Contains(f, "/"+Steps+"-") }), "the earlier build staged steps/: %v", staged)

	restarted, err := NewWriter(ConfigOf(earlier))
	require.NoError(t, err)
	_, err = restarted.Recover(time.Now())
	require.NoError(t, err)
	for i := 2; i < 4; i++ {
		require.NoError(t, WriteDeconstructed(direct, mergeTestBatch(t, i)))
		_, err = restarted.Write(mergeTestBatch(t, i))
		require.NoError(t, err)
	}
	res, err := restarted.Flush(true)
	require.NoError(t, err)
	require.NotEmpty(t, res.Files)
	assert.Empty(t, tree(t, StagingOf(restarted)), "every segment merged")
	for _, dataset := range []string{Cases, Quarantine, Steps} {
		assertSameRows(t, direct.Root(), restarted.Root(), dataset)
	}
}

// assertFootersNameEveryColumn checks that every column chunk in the footers under root names
// its column (path_in_schema is required, and readers look columns up by it).
func assertFootersNameEveryColumn(t *testing.T, root string) {
	files, err := NewLister(root, Cases, Quarantine, Steps).Next()
	require.NoError(t, err)
	for _, f := range files {
		assertFooterNamesEveryColumn(t, f.Path)
	}
}

// assertFooterNamesEveryColumn checks that the footer of a Parquet file gives each column
// chunk the path of its column, which Spark, Athena and Arrow look columns up by. parquet-go
// v0.32.0 wrote empty paths from a writer reused with Reset (parquet-go/parquet-go#602, fixed in
// v0.32.1).
func assertFooterNamesEveryColumn(t *testing.T, path string) {
	pf := testdataset.OpenParquet(t, path)
	columns := pf.Schema().Columns()
	for _, rg := range pf.Metadata().RowGroups {
		require.Len(t, rg.Columns, len(columns))
		for i, c := range rg.Columns {
			assert.Equal(t, columns[i], []string(c.MetaData.PathInSchema), path)
		}
	}
}

// parquetRows reads every row of pf, in order, as values with their levels.
func parquetRows(t *testing.T, pf *parquet.File) []parquet.Row {
	t.Helper()
	var out []parquet.Row
	for _, rg := range pf.RowGroups() {
		rows := rg.Rows()
		buf := make([]parquet.Row, 1)
		for {
			n, err := rows.ReadRows(buf)
			if n == 0 {
				require.ErrorIs(t, err, io.EOF)
				break
			}
			out = append(out, buf[0].Clone())
		}
		require.NoError(t, rows.Close())
	}
	return out
}

// A writer whose process is gone (its owner file's lock released, as the kernel does when a
// process dies, kill -9 included) leaves segments that the next writer adopts at its start, not
// 15 minutes later; a live writer's segments are left to it.
func TestSegmentsOfAGoneWriterAreAdoptedAtOnceAndALiveWritersAreNot(t *testing.T) {
	live := newSegmentWriter(t, 1000)
	writeBatches(t, live, 1)
	staleBefore := time.Now().Add(-15 * time.Minute)

	other, err := NewWriter(ConfigOf(live))
	require.NoError(t, err)
	_, err = other.Recover(staleBefore)
	require.NoError(t, err)
	res, err := other.Flush(true)
	require.NoError(t, err)
	assert.Empty(t, res.Files, "the segments of a live writer are its own")

	ReleaseOwner(live) // the process is gone
	restarted, err := NewWriter(ConfigOf(live))
	require.NoError(t, err)
	_, err = restarted.Recover(staleBefore)
	require.NoError(t, err)
	res, err = restarted.Flush(true)
	require.NoError(t, err)
	assert.Len(t, res.Files, 3, "adopted at the first start")
	assert.Len(t, ownerFiles(t, StagingOf(live)), 2, "the gone writer's owner file is removed; the two live writers' stay")
}

// rowDiff names the values of two rows that differ, with their levels (a row's String does not
// show them).
func rowDiff(want, got parquet.Row) string {
	if len(want) != len(got) {
		return fmt.Sprintf("%d values, want %d:\nwant %v\ngot  %v", len(got), len(want), want, got)
	}
	var diffs []string
	for i := range want {
		if !parquet.Equal(want[i], got[i]) || want[i].RepetitionLevel() != got[i].RepetitionLevel() || want[i].DefinitionLevel() != got[i].DefinitionLevel() || want[i].Column() != got[i].Column() {
			diffs = append(diffs, fmt.Sprintf("value %d: want %s got %s", i, levelled(want[i]), levelled(got[i])))
		}
	}
	return strings.Join(diffs, "; ")
}

func levelled(v parquet.Value) string {
	return fmt.Sprintf("%v (column %d, r%d d%d)", v, v.Column(), v.RepetitionLevel(), v.DefinitionLevel())
}
