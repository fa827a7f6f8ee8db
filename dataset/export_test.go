package dataset

import (
	"bytes"
	"io"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"

	"github.com/reprise-dev/reprise/replaycase"
)

// Hooks for the external tests (package dataset_test, which may import the fault injectors
// that themselves import this package).

func ReadIndexFrom(in io.ReaderAt, size int64) ([]IndexEntry, error) { return readIndex(in, size) }

// SetAfterRename makes publishing call fn after each rename; an error simulates a crash.
func SetAfterRename(w *Writer, fn func(renamed int) error) { w.afterRename = fn }

// SetAfterStagingListed makes the adoption of segments call fn once it has listed staging.
func SetAfterStagingListed(w *Writer, fn func()) { w.afterStagingListed = fn }

func StagingOf(w *Writer) string { return w.cfg.Staging }

func ConfigOf(w *Writer) WriterConfig { return w.cfg }

const BatchPrefix = batchPrefix

// StoreSpanIDsOnce and FillSpanIDs are the two halves of storing span ids once. StoreSpanIDsOnce
// is the writer's path for a batch of one case: the row of c, a copy, with its span ids stored
// once when they fit (c is not modified); ok is false when they do not.
func StoreSpanIDsOnce(c *replaycase.Case) (row CaseRow, ok bool) {
	byDay := map[string][]CaseRow{"": {*c}}
	ok = storeSpanIDsOnce(byDay)
	return byDay[""][0], ok
}

func FillSpanIDs(c *replaycase.Case) { fillSpanIDs(c) }

// FillEveryField sets every string reachable from v to invalid UTF-8 and every bool to true,
// and allocates one element of every pointer, slice and map on the way (see fillInvalid).
func FillEveryField(v any) int { return fillInvalid(reflect.ValueOf(v), 12) }

// WriteSegmentWithSteps stages cases as a segment the way builds did before the merge made
// steps/ from cases/: with steps/ files of its own (in every other way as Write does).
func WriteSegmentWithSteps(w *Writer, cases []*replaycase.Case) error {
	b, accepted, quarantined, steps, err := stageRowsOf(w, cases)
	if err != nil {
		return err
	}
	err = stageAll(w, b, Steps, steps, segmentOptions(parquet.SchemaOf(StepRow{})), nil)
	if err == nil {
		err = stageCaseRows(w, b, accepted, quarantined, w.segmentCaseOptions, w.segmentIDsOnceOptions, nil)
	}
	_, err = w.writeSegment(b, err, Result{})
	return err
}

// WriteDeconstructed publishes cases as one batch the way Write did before every batch went
// through a segment: each file's rows shredded from the Go rows (WriteRows) with the files'
// own options, steps/ from appendStepRows. It is the reference the tests compare the merge's
// files with: an independent way to the same rows.
func WriteDeconstructed(w *Writer, cases []*replaycase.Case) error {
	b, accepted, quarantined, steps, err := stageRowsOf(w, cases)
	if err != nil {
		return err
	}
	err = stageAll(w, b, Steps, steps, w.stepOptions, nil)
	if err == nil {
		err = stageCaseRows(w, b, accepted, quarantined, w.caseOptions, w.idsOnceOptions, nil)
	}
	if err == nil {
		err = b.commit()
	}
	if err == nil {
		err = b.publish(nil)
	}
	if err != nil {
		b.discard()
	}
	return err
}

// stageRowsOf repairs and sorts cases as Write does, makes their rows of each dataset by day,
// steps/ included (appendStepRows), and opens a batch for them.
func stageRowsOf(w *Writer, cases []*replaycase.Case) (b *batch, accepted, quarantined map[string][]CaseRow, steps map[string][]StepRow, err error) {
	now := time.Now()
	sort.SliceStable(cases, func(i, j int) bool { return cases[i].StartTime.Before(cases[j].StartTime) })
	accepted, quarantined, steps = map[string][]CaseRow{}, map[string][]CaseRow{}, map[string][]StepRow{}
	for _, c := range cases {
		RepairUTF8(c)
		dt := Partition(c, now)
		if DatasetOf(c) == Quarantine {
			quarantined[dt] = append(quarantined[dt], *c)
			continue
		}
		accepted[dt] = append(accepted[dt], *c)
		steps[dt] = appendStepRows(steps[dt], c)
	}
	b, err = newBatch(w.cfg)
	return b, accepted, quarantined, steps, err
}

// StepRowsOf is the steps/ rows the writer makes of cases.
func StepRowsOf(cases []*replaycase.Case) []StepRow {
	var rows []StepRow
	for _, c := range cases {
		rows = appendStepRows(rows, c)
	}
	return rows
}

// WriteLikeTheWriter writes rows to out the way the writer writes a file's rows, in row groups
// of rowGroupRows.
func WriteLikeTheWriter[T any](out io.Writer, rows []T, rowGroupRows int) error {
	pw := parquet.NewGenericWriter[T](out, parquet.MaxRowsPerRowGroup(int64(rowGroupRows)))
	if err := WriteRows(pw, rows); err != nil {
		return err
	}
	return pw.Close()
}

// IsOwnerFile tells whether a file in staging is a writer's owner file.
func IsOwnerFile(name string) bool {
	_, ok := ownerFileOf(name)
	return ok
}

// ReleaseOwner lets go of a writer's owner lock, as the end of its process does.
func ReleaseOwner(w *Writer) { w.owner.release(true) }

// ForgetOwner lets go of a writer's owner lock and removes its owner file: nothing then tells
// whether the writer of its segments lives, as for segments of a build that named no owner.
func ForgetOwner(w *Writer) { w.owner.release(false) }

// WrittenWithWrite reports whether a staged segment file was written with GenericWriter.Write,
// its NULLs to be restored by the merge.
func WrittenWithWrite(pf *parquet.File) bool { return writtenWithWrite(pf) }

// ZeroNullColumns is the column paths whose zero values the merge turns into NULLs in a segment
// of rows of type T, or the error that refuses T.
func ZeroNullColumns[T any]() ([]string, error) {
	schema := parquet.SchemaOf(*new(T))
	z, err := newZeroNulls(reflect.TypeFor[T](), schema)
	if err != nil {
		return nil, err
	}
	var out []string
	for i, path := range schema.Columns() {
		if z.maxDef[i] > 0 {
			out = append(out, strings.Join(path, "."))
		}
	}
	return out, nil
}

// RestoreNulls applies the merge's repair to the values of rows of type T.
func RestoreNulls[T any](rows []parquet.Row) error {
	z, err := newZeroNulls(reflect.TypeFor[T](), parquet.SchemaOf(*new(T)))
	if err != nil {
		return err
	}
	for _, row := range rows {
		for i, v := range row {
			z.restoreNulls(row[i:i+1], v.Column())
		}
	}
	return nil
}

// WriteCasesWithPagePool writes rows as the writer writes a cases/ file (segment: as a
// segment), its column pages kept in the pool the writers share or, with parquetPool, in
// parquet-go's own.
func WriteCasesWithPagePool(out io.Writer, rows []CaseRow, segment, parquetPool bool) error {
	schema := parquet.SchemaOf(CaseRow{})
	opts := segmentOptions(schema)
	if !segment {
		var err error
		if opts, err = writerOptions("zstd", 100, casePageBytes, schema); err != nil {
			return err
		}
	}
	if parquetPool {
		opts = append(opts, parquet.ColumnPageBuffers(parquet.NewBufferPool()))
	}
	pw := parquet.NewGenericWriter[CaseRow](out, opts...)
	if err := WriteRows(pw, rows); err != nil {
		return err
	}
	return pw.Close()
}

// WriteSegments writes each of batches as stageFile writes a cases/ segment (writeStaged), and
// returns the files' bytes: with one writer reused from segment to segment
// (segment_writers.go), or with a new writer each.
func WriteSegments(batches [][]CaseRow, reuse bool) ([][]byte, error) {
	schema := parquet.SchemaOf(CaseRow{})
	opts := segmentOptions(schema)
	z, err := newZeroNulls(reflect.TypeFor[CaseRow](), schema)
	if err != nil {
		return nil, err
	}
	var idle *idleWriters // nil: a new writer each
	if reuse {
		idle = new(idleWriters)
	}
	files := make([][]byte, len(batches))
	for i, rows := range batches {
		var out bytes.Buffer
		if _, err := writeStaged(idle, &out, rows, opts, z, func(closeParquet func() error) error { return closeParquet() }); err != nil {
			return nil, err
		}
		files[i] = out.Bytes()
	}
	return files, nil
}

// appendStepRows appends the steps of an accepted case to rows as steps/ rows, as the merge
// makes them from cases/ (merge_steps.go): without the trace id and the span ids. It is the
// reference the tests compare the merge with.
func appendStepRows(rows []StepRow, c *replaycase.Case) []StepRow {
	for _, st := range c.Steps {
		st.SpanID, st.ParentSpanID = "", ""
		if st.ToolCall != nil { // a copy: the case keeps its ids
			tc := *st.ToolCall
			tc.SpanID, tc.RequestedBy = "", ""
			st.ToolCall = &tc
		}
		if st.Retrieval != nil {
			r := *st.Retrieval
			r.SpanID = ""
			st.Retrieval = &r
		}
		rows = append(rows, StepRow{CaseID: c.CaseID, SchemaVersion: c.SchemaVersion, Step: st})
	}
	return rows
}

// SetObjectStoreHeaderTimeout sets how long a store made afterwards waits for a response's
// headers, until the returned function restores it.
func SetObjectStoreHeaderTimeout(d time.Duration) (restore func()) {
	old := objectStoreHeaderTimeout
	objectStoreHeaderTimeout = d
	return func() { objectStoreHeaderTimeout = old }
}

// AdoptEvery is how often Flush looks for segments left by a gone writer.
const AdoptEvery = adoptEvery

// SetLastAdopted sets when w's Flush last looked for segments to adopt, as if that was then.
func SetLastAdopted(w *Writer, at time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lastAdopted = at
}

// ReadCaseIDCount reads a file's case ids as a restarted writer does (readCaseIDs) and returns
// how many rows it read.
func ReadCaseIDCount(path string) (int, error) {
	rows, err := readCaseIDs(path)
	return len(rows), err
}

// ReadCasesBufferedBy reads every row of a cases/ file as ReadCases does, with parquet-go
// reading its column chunks size bytes at a time (so that a page header spans several reads).
func ReadCasesBufferedBy(path string, size int) ([]CaseRow, error) {
	f, df, err := open(path, parquet.ReadBufferSize(size))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readEveryRow[CaseRow](df)
}

// WithCodec lets Writers accept the codec c by name until the returned func is called.
func WithCodec(name string, c compress.Codec) (restore func()) {
	codecs[name] = c
	return func() { delete(codecs, name) }
}
