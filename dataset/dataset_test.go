package dataset_test

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	. "github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/internal/testdataset"
	"github.com/reprise-dev/reprise/internal/testdataset/faults"
	"github.com/reprise-dev/reprise/internal/testdataset/roundtrip"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/internal/testpipeline"
	"github.com/reprise-dev/reprise/replaycase"
)

func newWriter(t *testing.T, opts ...Option) *Writer {
	t.Helper()
	base := t.TempDir()
	w, err := NewWriter(WriterConfig{
		Root: filepath.Join(base, "data"), Staging: filepath.Join(base, "data.staging"),
		Compression: "zstd", MaxRowsPerFile: 100, RowGroupRows: 10,
	}, opts...)
	require.NoError(t, err)
	return w
}

// fixtureCases are real cases: recorded telemetry through the replay_case processor. Two are
// accepted (with 4 steps each), one is quarantined.
func fixtureCases(t *testing.T) []*replaycase.Case {
	cases := testpipeline.Run(t, nil, testfixtures.OTelEvents, testfixtures.Traceloop, testfixtures.OTelNoContent)
	require.Len(t, cases, 3)
	return cases
}

// tree lists the files under dir, relative and sorted.
func tree(t *testing.T, dir string) []string {
	var out []string
	_ = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		// Owner files are a live writer's lock in staging (segment_owner.go), not data.
		if err == nil && !d.IsDir() && !IsOwnerFile(d.Name()) {
			rel, _ := filepath.Rel(dir, path)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	sort.Strings(out)
	return out
}

func TestWriteListIndexRead(t *testing.T) {
	w := newWriter(t)
	cases := fixtureCases(t)
	want := map[string]replaycase.Case{}
	for _, c := range cases {
		want[c.CaseID] = *c
	}
	res, err := w.Write(cases)
	require.NoError(t, err)
	require.Len(t, res.Files, 3)
	assert.Equal(t, []string{Steps, Quarantine, Cases}, []string{res.Files[0].Dataset, res.Files[1].Dataset, res.Files[2].Dataset}, "publish order")
	assert.Equal(t, 8, res.Files[0].Rows)
	layout := tree(t, w.Root())
	require.Len(t, layout, 3, "%v", layout)
	for i, dataset := range []string{Cases, Quarantine, Steps} {
		assert.Regexp(t, `^`+dataset+`/dt=2026-11-30/part-[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}\.zstd\.parquet$`, layout[i])
	}
	assert.Empty(t, tree(t, StagingOf(w)), "nothing is left in staging")

	l := NewLister(w.Root(), Cases, Quarantine)
	files, err := l.Next()
	require.NoError(t, err)
	require.Len(t, files, 2)
	assert.Equal(t, Cases, files[0].Dataset)
	assert.Equal(t, "2026-11-30", files[0].Partition)
	assert.Equal(t, Quarantine, files[1].Dataset)

	seen := 0
	for _, f := range files {
		index, err := ReadIndex(f.Path)
		require.NoError(t, err)
		for _, e := range index {
			seen++
			c := want[e.CaseID]
			require.NotEmpty(t, c.CaseID, "index entry %s names a written case", e.CaseID)
			assert.Equal(t, c.Status, e.Status)
			assert.Equal(t, c.StartTime.Truncate(time.Microsecond).UTC(), e.StartTime)
			assert.Equal(t, c.AgentName, e.AgentName)
			assert.Equal(t, c.Provenance.ServiceName, e.ServiceName)
			var codes []string
			for _, r := range c.Reasons {
				codes = append(codes, r.Code)
			}
			assert.Equal(t, codes, e.Reasons)
			assert.Equal(t, c.EndTime.Truncate(time.Microsecond).UTC(), e.EndTime)
			assert.Equal(t, c.ClosedBy, e.ClosedBy)
			assert.Equal(t, c.ConversationID, e.ConversationID)
			assert.Equal(t, c.SchemaVersion, e.SchemaVersion)
			assert.Equal(t, c.Usage, e.Usage)
			assert.Equal(t, c.Provenance.TraceID, e.Provenance.TraceID)
			assert.Equal(t, c.Provenance.SpanCount, e.Provenance.SpanCount)
			assert.Equal(t, len(c.Reasons), len(e.ReasonDetails))
			for i, r := range c.Reasons {
				assert.Equal(t, r.Detail, e.ReasonDetails[i].Detail)
			}
			var llm []LLMStepRef
			for _, st := range c.Steps {
				if st.Kind == replaycase.StepLLM {
					llm = append(llm, LLMStepRef{Index: st.Index, CallSiteID: st.CallSiteID, CallSiteFields: st.CallSiteFields})
				}
			}
			assert.Equal(t, llm, e.LLMSteps)
			if c.Status == replaycase.StatusAccepted {
				assert.Len(t, e.LLMSteps, 2)
				assert.NotEmpty(t, e.LLMSteps[0].CallSiteID)
			}

			got, err := ReadCase(f.Path, e.Row)
			require.NoError(t, err)
			roundtrip.AssertSameCase(t, c, *got)
		}
		_, err = ReadCase(f.Path, int64(len(index)))
		assert.ErrorContains(t, err, "out of range")
	}
	assert.Equal(t, 3, seen)

	steps := NewLister(w.Root(), Steps)
	stepFiles, err := steps.Next()
	require.NoError(t, err)
	require.Len(t, stepFiles, 1)
	rows, err := ReadSteps(stepFiles[0].Path)
	require.NoError(t, err)
	require.Len(t, rows, 8)
	for _, r := range rows {
		assert.Empty(t, r.TraceID, "the trace id is stored in cases/ only")
		assert.Equal(t, SchemaVersion, r.SchemaVersion)
		st := want[r.CaseID].Steps[r.Index]
		require.NotEmpty(t, st.SpanID)
		assert.Empty(t, r.SpanID, "span ids are stored in cases/ only")
		assert.Empty(t, r.ParentSpanID)
		// With its span ids from cases/, joined on (case_id, index), the row is the step.
		r.SpanID, r.ParentSpanID = st.SpanID, st.ParentSpanID
		// parquet-go reads a NULL tool_call, retrieval or cost of a StepRow (which embeds the
		// step) as an empty struct; the file holds NULL.
		if st.ToolCall == nil && r.ToolCall != nil {
			assert.Zero(t, *r.ToolCall)
			r.ToolCall = nil
		}
		if st.ToolCall != nil {
			assert.Empty(t, r.ToolCall.SpanID+r.ToolCall.RequestedBy)
			r.ToolCall.SpanID, r.ToolCall.RequestedBy = st.ToolCall.SpanID, st.ToolCall.RequestedBy
		}
		if st.Retrieval == nil && r.Retrieval != nil {
			assert.Zero(t, *r.Retrieval)
			r.Retrieval = nil
		}
		if st.Retrieval != nil {
			assert.Empty(t, r.Retrieval.SpanID)
			r.Retrieval.SpanID = st.Retrieval.SpanID
		}
		if st.Cost == nil && r.Cost != nil {
			assert.Zero(t, *r.Cost)
			r.Cost = nil
		}
		roundtrip.AssertSameCase(t, replaycase.Case{Steps: []replaycase.Step{st}}, replaycase.Case{Steps: []replaycase.Step{r.Step}})
	}
	stepsLayout, _ := testdataset.OpenParquet(t, stepFiles[0].Path).Lookup(StepsLayoutKey)
	assert.Equal(t, StepsLayout, stepsLayout)

	again, err := l.Next()
	require.NoError(t, err)
	assert.Empty(t, again, "files already listed are not listed again")
	_, err = w.Write(fixtureCases(t)[:1])
	require.NoError(t, err)
	fresh, err := l.Next()
	require.NoError(t, err)
	require.Len(t, fresh, 1, "only the new file")
	l.Retry(fresh[0])
	retried, err := l.Next()
	require.NoError(t, err)
	assert.Equal(t, fresh, retried)
}

// countingReaderAt counts the bytes a reader asks for.
type countingReaderAt struct {
	r *os.File
	n int64
}

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	c.n += int64(len(p))
	return c.r.ReadAt(p, off)
}

func TestIndexDoesNotReadContent(t *testing.T) {
	w := newWriter(t)
	c := fixtureCases(t)[0]
	require.Equal(t, replaycase.StatusAccepted, c.Status)
	blob := make([]byte, 3<<20)
	_, _ = rand.Read(blob)
	c.InputMessages[0].Parts[0].Content = base64.StdEncoding.EncodeToString(blob)
	for i := range c.Steps {
		if len(c.Steps[i].InputMessages) > 0 {
			c.Steps[i].InputMessages[0].Parts[0].Content = c.InputMessages[0].Parts[0].Content
		}
	}
	res, err := w.Write([]*replaycase.Case{c})
	require.NoError(t, err)
	var path string
	for _, f := range res.Files {
		if f.Dataset == Cases {
			path = f.Path
		}
	}
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	info, err := f.Stat()
	require.NoError(t, err)
	counter := &countingReaderAt{r: f}
	index, err := ReadIndexFrom(counter, info.Size())
	require.NoError(t, err)
	require.Len(t, index, 1)
	t.Logf("the index read %d of %d bytes", counter.n, info.Size())
	assert.Less(t, counter.n, info.Size()/10, "the index must not read the messages and the tool result")
}

// readDataset reads every row of a dataset under root.
func readDataset(t *testing.T, root, dataset string) (cases []CaseRow, steps []StepRow) {
	files, err := NewLister(root, dataset).Next()
	require.NoError(t, err)
	for _, f := range files {
		if dataset == Steps {
			rows, err := ReadSteps(f.Path)
			require.NoError(t, err)
			steps = append(steps, rows...)
			continue
		}
		rows, err := ReadCases(f.Path)
		require.NoError(t, err)
		cases = append(cases, rows...)
	}
	return cases, steps
}

func TestCrashBetweenRenamesRollsForwardOnRestart(t *testing.T) {
	crash := errors.New("killed")
	w := newWriter(t)
	SetAfterRename(w, func(renamed int) error {
		if renamed == 1 {
			return crash // steps/ is published, quarantine/ and cases/ are not
		}
		return nil
	})
	_, err := w.Write(fixtureCases(t))
	require.ErrorIs(t, err, ErrCommitted, "the batch was committed: the caller must not write it again")
	require.ErrorIs(t, err, crash)
	cases, _ := readDataset(t, w.Root(), Cases)
	assert.Empty(t, cases, "no case row is visible before its batch is fully published")
	_, steps := readDataset(t, w.Root(), Steps)
	assert.Len(t, steps, 8)

	// A restart: a new writer over the same directories.
	restarted, err := NewWriter(ConfigOf(w))
	require.NoError(t, err)
	rec, err := restarted.Recover(time.Now().Add(-time.Hour))
	require.NoError(t, err)
	assert.Len(t, rec.RolledForward, 3, "the journal lists all three files")
	assert.Zero(t, rec.RolledBack)
	cases, _ = readDataset(t, w.Root(), Cases)
	quarantined, _ := readDataset(t, w.Root(), Quarantine)
	_, steps = readDataset(t, w.Root(), Steps)
	assert.Len(t, cases, 2)
	assert.Len(t, quarantined, 1)
	assert.Len(t, steps, 8, "steps are published once")
	assert.Empty(t, tree(t, StagingOf(w)))
}

func TestCommittedBatchIsFinishedByClose(t *testing.T) {
	w := newWriter(t)
	fail := true
	SetAfterRename(w, func(int) error {
		if fail {
			fail = false
			return errors.New("rename interrupted")
		}
		return nil
	})
	_, err := w.Write(fixtureCases(t))
	require.ErrorIs(t, err, ErrCommitted)
	require.NoError(t, w.Close(), "Close publishes what is committed")
	cases, _ := readDataset(t, w.Root(), Cases)
	assert.Len(t, cases, 2)

	fail = true
	_, err = w.Write(fixtureCases(t))
	require.ErrorIs(t, err, ErrCommitted)
	_, err = w.Write(nil)
	require.NoError(t, err, "so does the next Write")
	cases, _ = readDataset(t, w.Root(), Cases)
	assert.Len(t, cases, 4)
	assert.Empty(t, tree(t, StagingOf(w)))
}

func TestWriteFailureRollsBackTheWholeBatch(t *testing.T) {
	w := newWriter(t, faults.DiskFull(1024, Cases))
	_, err := w.Write(fixtureCases(t))
	require.ErrorIs(t, err, syscall.ENOSPC)
	assert.NotErrorIs(t, err, ErrCommitted)
	assert.Empty(t, tree(t, w.Root()), "no steps/ or quarantine/ rows without the batch's cases/ rows")
	assert.Empty(t, tree(t, StagingOf(w)), "the staged files are deleted")
}

// steps/ files are written only by the merge of the batch's segment: a failure there, after
// the segment is written, leaves nothing either, in the dataset or in staging.
func TestMergeFailureRollsBackTheWholeBatch(t *testing.T) {
	w := newWriter(t, faults.DiskFull(1024, Steps))
	_, err := w.Write(fixtureCases(t))
	require.ErrorIs(t, err, syscall.ENOSPC)
	assert.NotErrorIs(t, err, ErrCommitted)
	assert.Empty(t, tree(t, w.Root()))
	assert.Empty(t, tree(t, StagingOf(w)), "the segment and the merged files are deleted")
}

func TestRecoverDeletesStaleUncommittedBatches(t *testing.T) {
	w := newWriter(t)
	stale := filepath.Join(StagingOf(w), BatchPrefix+"0192-stale")
	fresh := filepath.Join(StagingOf(w), BatchPrefix+"0192-fresh")
	for _, dir := range []string{stale, fresh} {
		require.NoError(t, os.Mkdir(dir, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "cases-part-x.zstd.parquet"), []byte("partial"), 0o644))
	}
	old := time.Now().Add(-time.Hour)
	require.NoError(t, os.Chtimes(stale, old, old))
	rec, err := w.Recover(time.Now().Add(-15 * time.Minute))
	require.NoError(t, err)
	assert.Equal(t, 1, rec.RolledBack)
	assert.NoDirExists(t, stale)
	assert.DirExists(t, fresh, "a batch another collector may be writing right now is left alone")
	assert.Empty(t, tree(t, w.Root()))
}

func TestInvalidUTF8IsRepairedBeforeTheDisk(t *testing.T) {
	w := newWriter(t)
	cases := fixtureCases(t)
	c := cases[0]
	c.AgentName = "bot\xff"
	c.InputMessages[0].Parts[0].Content = "caf\xc3(" + c.InputMessages[0].Parts[0].Content
	c.Metadata = map[string]string{"k\xfe": "v\xfd", "ok": "fine"}
	c.Steps[0].Name = "\xe2\x82"
	res, err := w.Write(cases)
	require.NoError(t, err)
	assert.Equal(t, 5, res.RepairedStrings)

	var got *CaseRow
	rows, _ := readDataset(t, w.Root(), DatasetOf(c))
	for i := range rows {
		if rows[i].CaseID == c.CaseID {
			got = &rows[i]
		}
	}
	require.NotNil(t, got)
	assert.Equal(t, "bot\uFFFD", got.AgentName)
	assert.True(t, strings.HasPrefix(got.InputMessages[0].Parts[0].Content, "caf\uFFFD("))
	assert.Equal(t, map[string]string{"k\uFFFD": "v\uFFFD", "ok": "fine"}, got.Metadata)
	assert.Equal(t, "\uFFFD", got.Steps[0].Name)
	for _, f := range tree(t, w.Root()) {
		assert.True(t, utf8.Valid([]byte(f)))
	}
}

func TestReadersRefuseAnUnknownSchemaVersion(t *testing.T) {
	path := filepath.Join(t.TempDir(), "part-x.zstd.parquet")
	f, err := os.Create(path)
	require.NoError(t, err)
	pw := parquet.NewGenericWriter[CaseRow](f, parquet.KeyValueMetadata(SchemaVersionKey, "replay-case.v99"))
	_, err = pw.Write([]CaseRow{{CaseID: "a"}})
	require.NoError(t, err)
	require.NoError(t, pw.Close())
	require.NoError(t, f.Close())
	_, err = ReadIndex(path)
	assert.ErrorContains(t, err, `this build reads "replay-case.v1"`)
	_, err = ReadCase(path, 0)
	assert.ErrorContains(t, err, `"replay-case.v99"`)
}

func TestDeadLetterIsWrittenOnceAndCleared(t *testing.T) {
	w := newWriter(t)
	key := DeadLetterKey([]string{"b", "a"})
	assert.Equal(t, key, DeadLetterKey([]string{"a", "b"}), "the key does not depend on the order")
	path, created, err := w.DeadLetter(key, []byte("payload"))
	require.NoError(t, err)
	assert.True(t, created)
	assert.Equal(t, filepath.Join(w.Root(), Failed, "batch-"+key+DeadLetterExt), path)
	_, created, err = w.DeadLetter(key, []byte("payload"))
	require.NoError(t, err)
	assert.False(t, created, "a retry of the same batch keeps one dead letter")
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "payload", string(got))
	cleared, err := w.ClearDeadLetter(key)
	require.NoError(t, err)
	assert.True(t, cleared)
	assert.NoFileExists(t, path)
	cleared, err = w.ClearDeadLetter(key)
	require.NoError(t, err)
	assert.False(t, cleared)
}

// Every file a Write or Flush publishes is named in one result, those of a batch an earlier
// Write committed and could not publish included: the exporter uploads what a result names, so
// a file published by a retry and named in none reached the object store only at a restart.
func TestEveryPublishedFileIsInOneResult(t *testing.T) {
	for _, maxAge := range []time.Duration{0, time.Hour} {
		cfg := ConfigOf(newWriter(t))
		cfg.FileMaxAge, cfg.FileMaxStagedBytes = maxAge, 1<<30
		w, err := NewWriter(cfg)
		require.NoError(t, err)
		fails := 0
		SetAfterRename(w, func(int) error {
			if fails > 0 {
				fails--
				return errors.New("rename interrupted")
			}
			return nil
		})
		var named []string
		record := func(res Result) {
			for _, f := range res.Files {
				named = append(named, f.Path)
			}
		}
		write := func(failing int, cases []*replaycase.Case) {
			fails = failing
			res, err := w.Write(cases)
			if err == nil && maxAge > 0 {
				fails = failing
				res2, err2 := w.Flush(true)
				record(res2)
				if failing > 0 {
					require.ErrorIs(t, err2, ErrCommitted, "file_max_age %s", maxAge)
				}
			} else if failing > 0 {
				require.ErrorIs(t, err, ErrCommitted, "file_max_age %s", maxAge)
			}
			record(res)
		}
		write(1, fixtureCases(t)) // committed, not published
		write(0, fixtureCases(t)) // publishes it first, then its own
		write(1, fixtureCases(t))
		write(0, nil) // a Write of nothing publishes what is pending
		fails = 0
		res, err := w.Flush(true)
		require.NoError(t, err)
		record(res)

		var onDisk []string
		require.NoError(t, filepath.WalkDir(w.Root(), func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".parquet") {
				onDisk = append(onDisk, p)
			}
			return err
		}))
		assert.NotEmpty(t, onDisk)
		assert.ElementsMatch(t, onDisk, named, "file_max_age %s: each published file in one result", maxAge)
		require.NoError(t, w.Close())
	}
}
