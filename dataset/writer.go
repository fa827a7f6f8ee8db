package dataset

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/parquet-go/parquet-go"

	"github.com/reprise-dev/reprise/replaycase"
)

// WriterConfig says where and how a Writer writes.
type WriterConfig struct {
	// Root is the dataset root.
	Root string
	// Staging holds batches while they are written: outside Root (readers must never see a
	// file being written) and on the same filesystem (publishing is a rename).
	Staging string
	// Compression is one of Compressions().
	Compression string
	// MaxRowsPerFile caps the rows of one file; more rows of one dataset and day in a batch
	// are written as several files.
	MaxRowsPerFile int
	// RowGroupRows caps the rows of one row group (the writer holds one row group in memory).
	RowGroupRows int
	// FileMaxAge, when positive, makes Write stage each batch as a segment instead of publishing
	// it as its own files; the segments are merged into one file per dataset and day when the
	// oldest is this old (checked by Write and Flush) or they reach FileMaxStagedBytes
	// (segments.go). Zero publishes every batch as its own files.
	FileMaxAge time.Duration
	// FileMaxStagedBytes is how many bytes of segments are staged at most before they are
	// merged; used with FileMaxAge.
	FileMaxStagedBytes int64
	// SkipRedelivered makes Write leave out a case delivered again, as it was, after a crash
	// that came after its batch was committed (redelivered.go): for a caller whose persistent
	// queue delivers a batch again when the crash came before it learnt the batch was written.
	SkipRedelivered bool
}

// StagedFile is a file being written in staging.
type StagedFile interface {
	io.Writer
	Sync() error
	Close() error
}

// Option changes how a Writer touches the filesystem. Tests use them to inject failures.
type Option func(*Writer)

// WithCreateFile replaces os.Create for the files written in staging (a test injects a full
// disk with it).
func WithCreateFile(create func(path string) (StagedFile, error)) Option {
	return func(w *Writer) { w.create = create }
}

// Writer writes batches of cases into a dataset root. It is safe for concurrent use; each
// Write publishes one batch (see publish.go).
type Writer struct {
	cfg WriterConfig
	// caseOptions and stepOptions write the files users read, all of them made by the merge.
	caseOptions []parquet.WriterOption
	stepOptions []parquet.WriterOption
	// segmentCaseOptions write segments (segments.go), every batch's first; a segment has no
	// steps/ files: the merge makes them from its cases/ files, as stepsOfCases says.
	segmentCaseOptions []parquet.WriterOption
	stepsOfCases       *stepsOfCases
	// idsOnceOptions and segmentIDsOnceOptions write cases/ and quarantine/ files that store
	// span ids once (ids_stored_once.go): the case options with CaseIDsLayoutKey in the footer.
	idsOnceOptions        []parquet.WriterOption
	segmentIDsOnceOptions []parquet.WriterOption
	// caseZeroNulls are the columns of cases/ and quarantine/ whose NULLs the merge restores in
	// segments written with GenericWriter.Write (segment_nulls.go).
	caseZeroNulls *zeroNulls
	// segmentWriters are the closed writers of earlier segments, reused (segment_writers.go).
	segmentWriters idleWriters
	create         func(path string) (StagedFile, error)
	// afterRename is called after each file of a batch is renamed into the root; a test makes
	// it fail to simulate a crash in the middle of publishing.
	afterRename func(renamed int) error
	// syncStaging makes a segment's rename durable (syncDir); a test makes it fail.
	syncStaging func(dir string) error
	// afterStagingListed is called by adoptSegments once it has listed staging and read the
	// merges' journals; a test runs a concurrent Flush there.
	afterStagingListed func()

	mu       sync.Mutex
	pending  []*batch   // committed batches whose publishing failed; retried by every Write
	segments []segment  // committed segments not yet merged, oldest first
	merging  sync.Mutex // one merge at a time
	// staleAge is how old another process's segment must be to be adopted (set by Recover);
	// lastAdopted is when Flush last looked for such segments.
	staleAge    time.Duration
	lastAdopted time.Time
	// owner names this writer's segments and tells other processes it lives (segment_owner.go);
	// nil without file_max_age or without file locks.
	owner *segmentOwner
	// adopted are the case ids of the segments adoptSegments took over and of the files
	// published in the last hour of the writer before this one, or since this one started,
	// which Write does not write again when a case is sent again after a crash (resent.go).
	adopted adoptedCaseIDs
	// started is when this writer was made: the files modified before it are the previous
	// run's (readPublished).
	started time.Time
	// delivered are the digests of cases committed before a restart, with SkipRedelivered
	// (redelivered.go).
	delivered deliveredDigests
}

// NewWriter checks the configuration, creates Root and Staging, and proves that a file can be
// renamed from one to the other. Call Recover before the first Write.
func NewWriter(cfg WriterConfig, opts ...Option) (*Writer, error) {
	cfg.Root, cfg.Staging = filepath.Clean(cfg.Root), filepath.Clean(cfg.Staging)
	if err := checkOutside(cfg.Root, cfg.Staging, filepath.Abs); err != nil {
		return nil, err
	}
	if cfg.MaxRowsPerFile <= 0 || cfg.RowGroupRows <= 0 {
		return nil, fmt.Errorf("max rows per file (%d) and row group rows (%d) must be positive", cfg.MaxRowsPerFile, cfg.RowGroupRows)
	}
	caseOptions, err := writerOptions(cfg.Compression, cfg.RowGroupRows, casePageBytes, parquet.SchemaOf(CaseRow{}))
	if err != nil {
		return nil, err
	}
	if cfg.FileMaxAge < 0 || cfg.FileMaxAge > 0 && cfg.FileMaxStagedBytes <= 0 {
		return nil, fmt.Errorf("file max age (%s) must not be negative, and with it file max staged bytes (%d) must be positive", cfg.FileMaxAge, cfg.FileMaxStagedBytes)
	}
	stepOptions, _ := writerOptions(cfg.Compression, cfg.RowGroupRows, stepPageBytes, parquet.SchemaOf(StepRow{}))
	stepOptions = append(stepOptions, parquet.KeyValueMetadata(StepsLayoutKey, StepsLayout))
	w := &Writer{
		cfg: cfg, caseOptions: caseOptions, stepOptions: stepOptions, create: createFile, syncStaging: syncDir,
		segmentCaseOptions: segmentOptions(parquet.SchemaOf(CaseRow{})), started: time.Now(),
	}
	if w.stepsOfCases, err = newStepsOfCases(parquet.SchemaOf(CaseRow{}), parquet.SchemaOf(StepRow{})); err != nil {
		return nil, err
	}
	if w.caseZeroNulls, err = newZeroNulls(reflect.TypeFor[CaseRow](), parquet.SchemaOf(CaseRow{})); err != nil {
		return nil, err
	}
	w.idsOnceOptions = withIDsOnce(w.caseOptions)
	w.segmentIDsOnceOptions = withIDsOnce(w.segmentCaseOptions)
	for _, o := range opts {
		o(w)
	}
	for _, dir := range []string{cfg.Root, cfg.Staging} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
	}
	if err := checkOutside(cfg.Root, cfg.Staging, filepath.EvalSymlinks); err != nil {
		return nil, err
	}
	if err := checkSameFilesystem(cfg.Root, cfg.Staging); err != nil {
		return nil, fmt.Errorf("staging directory %s and root %s: %w", cfg.Staging, cfg.Root, err)
	}
	if cfg.FileMaxAge > 0 {
		owner, err := newSegmentOwner(cfg.Staging)
		if err != nil {
			return nil, fmt.Errorf("staging directory %s: %w", cfg.Staging, err)
		}
		w.owner = owner
	}
	return w, nil
}

func createFile(path string) (StagedFile, error) {
	return os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
}

// Root is the dataset root the writer writes into.
func (w *Writer) Root() string { return w.cfg.Root }

// Published is one file a Write made visible.
type Published struct {
	File
	Rows  int
	Bytes int64
}

// Result is what one Write did.
type Result struct {
	// Files are the files the call published: its own batch's, and those of batches an earlier
	// call committed and could not publish (ErrCommitted), which it published first. A caller
	// that mirrors the files (an object store) finds each file a Write or Flush published in
	// one result; Close publishes such batches too, and names none.
	Files []Published
	// RepairedStrings counts the strings whose invalid UTF-8 was replaced by U+FFFD.
	RepairedStrings int
	// Unreadable lists the staged segments a Flush could not read and set aside in staging:
	// their rows are not published (segments.go).
	Unreadable []UnreadableSegment
	// Resent lists the cases Write dropped: marked Resent, and held by a segment this writer
	// adopted or a file published within the hour before (resent.go).
	Resent []string
	// Redelivered lists the cases Write dropped with SkipRedelivered: delivered again as they
	// were committed before a restart (redelivered.go).
	Redelivered []string
}

// ErrCommitted wraps a failure that happened after a batch was committed: its files are
// complete in staging and recorded in its journal, and the next Write, Close, or Recover
// after a restart publishes them (a segment, the next Flush). Writing the batch again would
// duplicate its rows.
var ErrCommitted = errors.New("batch committed, publishing incomplete")

// Write publishes one batch: accepted cases to cases/ and their steps to steps/, quarantined
// cases to quarantine/, each partitioned by the UTC day the case started. Invalid UTF-8 in
// any string is repaired first (the cases are modified in place). When Write returns nil,
// every row is visible; when it returns an error not wrapping ErrCommitted, no row is.
//
// The batch is always written as a segment first (its cases/ and quarantine/ rows, on the fast
// path, segments.go). Without FileMaxAge, Write then merges that one segment into the batch's files
// and publishes them (publishSegment). The merge writes steps/ from the cases/ columns and copies
// the rest column by column. That costs less than shredding each row twice with the files' full
// profile (statistics, page indexes, bloom filter, zstd), once into cases/ and once into steps/: a
// quarter less CPU and half the allocations for batches of 1,000 cases (BenchmarkSegmentSize,
// docs/benchmarks.md part 16).
//
// With FileMaxAge set, Write stages the batch as a segment and stops: when it returns nil,
// the rows are durable in staging, and Flush publishes them. Calling Flush after Write, rather
// than merging inside it, lets the batch's cases be freed before the merge.
//
// A case marked Resent that a segment this writer adopted, or a file published within the hour
// before, holds is not written again: it is named in Result.Resent (resent.go).
func (w *Writer) Write(cases []*replaycase.Case) (Result, error) {
	// What still fails stays pending; this batch is written regardless. What is published now
	// is in this Write's result: the caller records and uploads what a result names.
	retried, _ := w.retryPending()
	res := Result{Files: retried}
	cases, res.Resent = w.dropResent(cases, time.Now()) // written before a crash (resent.go)
	var delivered []byte
	if w.cfg.SkipRedelivered {
		cases, delivered, res.Redelivered = w.delivered.drop(cases, time.Now()) // committed before a crash (redelivered.go)
	}
	if len(cases) == 0 {
		return res, nil
	}
	for _, c := range cases {
		res.RepairedStrings += RepairUTF8(c)
	}
	sort.SliceStable(cases, func(i, j int) bool { return cases[i].StartTime.Before(cases[j].StartTime) })
	now := time.Now()
	accepted, quarantined := map[string][]CaseRow{}, map[string][]QuarantineRow{}
	days := make([]string, len(cases)) // each case's partition
	// To allocate each day's rows once (a case row is large).
	acceptedOfDay, quarantinedOfDay := map[string]int{}, map[string]int{}
	for i, c := range cases {
		days[i] = Partition(c, now)
		if DatasetOf(c) == Quarantine {
			quarantinedOfDay[days[i]]++
		} else {
			acceptedOfDay[days[i]]++
		}
	}
	for dt, n := range acceptedOfDay {
		accepted[dt] = make([]CaseRow, 0, n)
	}
	for dt, n := range quarantinedOfDay {
		quarantined[dt] = make([]QuarantineRow, 0, n)
	}
	for i, c := range cases {
		if DatasetOf(c) == Quarantine {
			quarantined[days[i]] = append(quarantined[days[i]], *c)
		} else {
			accepted[days[i]] = append(accepted[days[i]], *c)
		}
	}

	b, err := newBatch(w.cfg)
	if err != nil {
		return res, err
	}
	// Merged at once, the segment is never read after a crash: its files need no fsync.
	b.scratch = w.cfg.FileMaxAge <= 0
	b.delivered = delivered
	err = stageCaseRows(w, b, accepted, quarantined, w.segmentCaseOptions, w.segmentIDsOnceOptions, w.caseZeroNulls)
	if b.scratch {
		res, err = w.publishSegment(b, err, res)
	} else {
		res, err = w.writeSegment(b, err, res)
	}
	if err == nil && w.cfg.SkipRedelivered {
		// Only behind a persistent queue can a copy be written after the restart (resent.go).
		w.adopted.wroteAfterRead(cases, time.Now())
	}
	return res, err
}

// publishSegment merges the files of seg, a batch staged as a segment and never committed, into
// a new batch of final files (steps/ before cases/, as a Flush writes them), commits and
// publishes that batch, and removes seg. A crash before the commit leaves two uncommitted
// batches, which Recover deletes; after it, the committed batch, which Recover publishes.
func (w *Writer) publishSegment(seg *batch, stageErr error, res Result) (Result, error) {
	if stageErr != nil {
		seg.discard()
		return res, stageErr
	}
	b, err := w.mergeCommitted([]segment{{name: filepath.Base(seg.dir), entries: seg.entries, delivered: seg.delivered}}, false)
	seg.discard() // before the files are visible: nothing of the batch is left to clean up then
	if err != nil {
		return res, err
	}
	files, err := w.publishCommitted(b)
	res.Files = append(res.Files, files...)
	return res, err
}

// stageCaseRows stages the quarantine/ rows, then the cases/ rows, each day's file with opts, or
// idsOnceOpts when its span ids can be stored once (idsLayoutOptions); zeroNulls as stageAll
// takes it.
func stageCaseRows(w *Writer, b *batch, accepted, quarantined map[string][]CaseRow, opts, idsOnceOpts []parquet.WriterOption, zeroNulls *zeroNulls) error {
	err := stageAll(w, b, Quarantine, quarantined, idsLayoutOptions(quarantined, opts, idsOnceOpts), zeroNulls)
	if err == nil {
		err = stageAll(w, b, Cases, accepted, idsLayoutOptions(accepted, opts, idsOnceOpts), zeroNulls)
	}
	return err
}

// mergeCommitted merges segs into a new batch and commits it; it leaves nothing when it fails.
// inJournal names the segments in the batch's journal, so that publishing it removes them
// (Flush's committed segments); a segment never committed is removed by its writer.
func (w *Writer) mergeCommitted(segs []segment, inJournal bool) (*batch, error) {
	b, err := newBatch(w.cfg)
	if err != nil {
		return nil, err
	}
	err = w.mergeSegments(b, segs)
	if err == nil && inJournal {
		for _, s := range segs {
			b.segments = append(b.segments, s.name)
		}
	}
	for _, s := range segs {
		b.delivered = append(b.delivered, s.delivered...)
	}
	if err == nil {
		err = b.commit()
	}
	if err != nil {
		b.discard()
		return nil, err
	}
	return b, nil
}

// publishCommitted publishes a committed batch and lists its files. A batch it cannot finish
// stays pending, for the next Write, Flush, Close or Recover, and the error wraps ErrCommitted.
func (w *Writer) publishCommitted(b *batch) ([]Published, error) {
	if err := b.publish(w.afterRename); err != nil {
		w.mu.Lock()
		w.pending = append(w.pending, b)
		w.mu.Unlock()
		return nil, fmt.Errorf("%w: %w", ErrCommitted, err)
	}
	w.keptDelivered(b)
	return b.published(), nil
}

// writeSegment commits a staged batch as a segment. A segment that stays committed although
// committing it failed (ErrCommitted) is merged like any other.
func (w *Writer) writeSegment(b *batch, stageErr error, res Result) (Result, error) {
	var s segment
	err := stageErr
	if err == nil {
		s, err = w.commitSegment(b)
	}
	if errors.Is(err, ErrCommitted) {
		w.addSegment(s)
		return res, err
	}
	if err != nil {
		b.discard()
		return res, err
	}
	w.addSegment(s)
	return res, nil
}

// retryPending publishes the committed batches an earlier Write could not finish, and returns
// the files it published.
func (w *Writer) retryPending() ([]Published, error) {
	w.mu.Lock()
	pending := w.pending
	w.pending = nil
	w.mu.Unlock()
	var published []Published
	var errs []error
	for _, b := range pending {
		if err := b.publish(nil); err != nil {
			errs = append(errs, err)
			w.mu.Lock()
			w.pending = append(w.pending, b)
			w.mu.Unlock()
			continue
		}
		w.keptDelivered(b)
		published = append(published, b.published()...)
	}
	return published, errors.Join(errs...)
}

// Close publishes the committed batches an earlier Write could not finish. Those it still
// cannot publish stay committed in staging, and Recover publishes them at the next start.
// Staged segments are left for Flush(true), or for the next start, which adopts them at once.
func (w *Writer) Close() error {
	defer func() {
		w.mu.Lock()
		left := len(w.segments) > 0
		w.mu.Unlock()
		w.owner.release(left)
	}()
	if _, err := w.retryPending(); err != nil {
		return fmt.Errorf("%w: %w", ErrCommitted, err)
	}
	return nil
}

// stageAll writes the rows of one dataset, by partition in order, as files of at most
// MaxRowsPerFile rows; zeroNulls is set for segments, whose rows go through the fast path
// (writeStagedRows).
func stageAll[T any](w *Writer, b *batch, dataset string, byDay map[string][]T, opts []parquet.WriterOption, zeroNulls *zeroNulls) error {
	days := make([]string, 0, len(byDay))
	for dt := range byDay {
		days = append(days, dt)
	}
	sort.Strings(days)
	for _, dt := range days {
		rows := byDay[dt]
		for len(rows) > 0 {
			n := min(len(rows), w.cfg.MaxRowsPerFile)
			if err := stageFile(w, b, dataset, dt, rows[:n], opts, zeroNulls); err != nil {
				return err
			}
			rows = rows[n:]
		}
	}
	return nil
}

// stageFile writes one complete, synced Parquet file into the batch's staging directory. A
// segment written on the fast path reuses the writer of the one before (segment_writers.go);
// every other file gets a new writer.
func stageFile[T any](w *Writer, b *batch, dataset, dt string, rows []T, opts []parquet.WriterOption, zeroNulls *zeroNulls) error {
	f, err := w.createStaged(b, dataset, dt)
	if err != nil {
		return err
	}
	f.rows = len(rows)
	f.longBounds = longBoundsOf(rows)
	finished, err := writeStaged(&w.segmentWriters, f.cw, rows, opts, zeroNulls, func(closeParquet func() error) error {
		f.closeParquet = closeParquet
		return f.finish(b) // names the file in its errors
	})
	if err != nil && !finished {
		f.abort()
		return fmt.Errorf("writing %s/%s=%s: %w", dataset, PartitionKey, dt, err)
	}
	return err
}

// WriteRows gives Go rows to a parquet-go writer (case files, scripts/datasetsize, and segment
// files the fast path cannot write; segments, which only the merge reads, take the fast path
// with a repair at the merge, segment_nulls.go) as parquet.Row values
// that carry their levels, made by Schema.Deconstruct, not through GenericWriter.Write:
// parquet-go v0.32's Write, for an optional
// field of a non-pointer type, stores some zero values as present ("" instead of NULL) — a null
// after a run of present values among the rows of one call or the elements of one list
// (column_buffer_write.go compares the shifted null bitmap with (1<<y)-1, not with all ones).
// Deconstruct tests each value on its own (TestStoredRowsAreTheRowsDeconstructed).
func WriteRows[T any](pw *parquet.GenericWriter[T], rows []T) error {
	const chunk = 64 // rows deconstructed at a time, their value slices reused
	schema := pw.Schema()
	buf := make([]parquet.Row, min(chunk, len(rows)))
	for len(rows) > 0 {
		n := min(chunk, len(rows))
		for i := range n {
			buf[i] = schema.Deconstruct(buf[i][:0], &rows[i])
		}
		if _, err := pw.WriteRows(buf[:n]); err != nil {
			return err
		}
		rows = rows[n:]
	}
	return nil
}

// stagedFile is a Parquet file being written into a batch's staging directory.
type stagedFile struct {
	file         StagedFile
	cw           *countingWriter
	dataset, dt  string
	name         string                      // the final file name
	pw           *parquet.GenericWriter[any] // the writer of a merge (merge_columns.go); nil for a batch's own file
	closeParquet func() error                // writes the footer
	rows         int
	longBounds   []string // statistics columns holding a value too long for statistics (long_bounds.go)
}

// createStaged creates a file in the batch's staging directory. File names are UUIDv7: unique
// across collectors and restarts, and sorted by creation time.
func (w *Writer) createStaged(b *batch, dataset, dt string) (*stagedFile, error) {
	id, err := uuid.NewV7()
	if err != nil {
		return nil, err
	}
	name := fmt.Sprintf("part-%s.%s.parquet", id, w.cfg.Compression)
	f, err := w.create(filepath.Join(b.dir, dataset+"-"+name))
	if err != nil {
		return nil, err
	}
	return &stagedFile{file: f, cw: &countingWriter{w: f}, dataset: dataset, dt: dt, name: name}, nil
}

// finish writes the footer, fsyncs and closes the file, and adds it to the batch.
func (s *stagedFile) finish(b *batch) error {
	var err error
	if s.pw != nil { // a file readers read (a merge's)
		err = closeWithoutUnboundedIndexes(s.pw, s.closeParquet, s.cw)
	} else {
		err = s.closeParquet()
	}
	if err == nil && !b.scratch {
		err = s.file.Sync()
	}
	if cerr := s.file.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %s/%s=%s: %w", s.dataset, PartitionKey, s.dt, err)
	}
	b.entries = append(b.entries, journalEntry{
		Staged:     s.dataset + "-" + s.name,
		Final:      filepath.ToSlash(filepath.Join(s.dataset, PartitionKey+"="+s.dt, s.name)),
		Rows:       s.rows,
		Bytes:      s.cw.n,
		LongBounds: s.longBounds,
	})
	return nil
}

// abort closes a file that will not be finished; it goes with its batch directory.
func (s *stagedFile) abort() { s.file.Close() }

type countingWriter struct {
	w io.Writer
	n int64
	// capture holds what is written in tail instead of writing it (column_index.go).
	capture bool
	tail    []byte
}

func (c *countingWriter) Write(p []byte) (int, error) {
	if c.capture {
		c.tail = append(c.tail, p...)
		return len(p), nil
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// checkOutside fails when staging is root or inside it, the two compared as resolve makes them:
// absolute (a relative path and an absolute one can name the same directory), then, once both
// exist, with symbolic links resolved. Readers glob the root (cases/**/*.parquet): inside it, the
// segments and batches being written would be read as data, some twice.
func checkOutside(root, staging string, resolve func(string) (string, error)) error {
	r, err := resolve(root)
	if err != nil {
		return fmt.Errorf("dataset root %s: %w", root, err)
	}
	s, err := resolve(staging)
	if err != nil {
		return fmt.Errorf("staging directory %s: %w", staging, err)
	}
	if Inside(s, r) {
		return fmt.Errorf("staging directory %s must be outside the dataset root %s", staging, root)
	}
	return nil
}

// Inside reports whether path is dir or under it, however either is spelled (both are made
// absolute first; symbolic links are the caller's to resolve). The exporter's config check uses
// it too, so both refuse the same staging directories.
func Inside(path, dir string) bool {
	p, perr := filepath.Abs(path)
	d, derr := filepath.Abs(dir)
	if perr != nil || derr != nil {
		return false
	}
	rel, err := filepath.Rel(d, p)
	return err == nil && (rel == "." || filepath.IsLocal(rel))
}

// checkSameFilesystem proves that a file can be renamed from staging into root.
func checkSameFilesystem(root, staging string) error {
	f, err := os.CreateTemp(staging, "probe-*.tmp")
	if err != nil {
		return err
	}
	f.Close()
	target := filepath.Join(root, "."+filepath.Base(f.Name()))
	if err := os.Rename(f.Name(), target); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("cannot rename between them (they must be on the same filesystem): %w", err)
	}
	return os.Remove(target)
}
