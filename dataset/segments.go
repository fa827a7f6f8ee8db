package dataset

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/parquet-go/parquet-go"
)

// Segments: many batches, one file per dataset and day.
//
// Every Parquet file costs a fixed ~50 KiB (a footer describing ~240 columns, page indexes,
// a bloom filter, a page header per column chunk), which outweighs the rows of a small batch.
// With WriterConfig.FileMaxAge set, Write does not publish a batch as its own files: it stages
// the batch as a segment, complete and durable in staging, and returns, so the caller may
// acknowledge it. Flush merges the segments into one file per dataset and day, and publishes
// them as one batch (publish.go), when the oldest is FileMaxAge old or together they hold
// FileMaxStagedBytes. Merging streams rows from the segment files into the final file one
// row group at a time, so a larger file costs disk in staging, not memory. A segment holds
// the batch's cases/ and quarantine/ rows; the merge makes the steps/ rows from the cases/
// rows (merge_steps.go). The segment is durable before Write returns, and steps/ is made from
// it again if a merge is interrupted before its journal is committed.
//
// A segment is a batch directory whose files are written and fsynced, with its journal
// (PUBLISH.json listing where each file would go, marked as a segment's); renaming the
// directory from batch-… to segment-… is its commit. A merge's journal lists the segments it
// consumed: publishing the merged files removes them, Recover after a crash finishes that, and
// no writer adopts them meanwhile, so no row is published twice nor lost. A crash before a
// segment is committed leaves an uncommitted batch (its journal, a segment's, does not commit
// it: publish.go), whose rows the caller never acknowledged. A segment a merge cannot read is
// set aside in staging (unreadable-segment-…), not deleted, so that it does not keep the
// others from being published.

// segmentPrefix names committed segments in staging.
const segmentPrefix = "segment-"

// segment is one committed batch waiting to be merged.
type segment struct {
	name    string // directory name in staging
	created time.Time
	bytes   int64
	entries []journalEntry
	// delivered are the digests of its cases (journal.Delivered).
	delivered []byte
}

// segmentRowGroupRows bounds what the writer of a segment holds in memory: one row group's
// pages. A batch is in memory anyway, and a row group of 1,024 rows is about as large as the
// batch that fills it (BenchmarkBatchMemory: no higher peak than 128 rows); fewer row groups
// mean fewer pages to compress and read back and a smaller footer to decode at the merge,
// which took the CPU of a staged and merged batch down by about 15 % against 128 rows.
const segmentRowGroupRows = 1024

// segmentPageBytes bounds the pages of a segment. The merge reads one page at a time
// (merge_columns.go); larger pages save no CPU there and raise the segment writer's peak heap
// (256 KiB pages: +10 MiB per batch of 1,000 cases in BenchmarkBatchMemory).
const segmentPageBytes = 16 << 10

// segmentOptions write segment files (their rows through GenericWriter.Write, the merge
// restoring the NULLs it gets wrong: segment_nulls.go): the final schema, Snappy (a segment is
// read back once, moments later: zstd would cost CPU twice, and Snappy, cheap, still shrinks
// what is fsynced), small row groups and pages (below), and no statistics or bloom filter
// (nobody queries a segment).
func segmentOptions(schema *parquet.Schema) []parquet.WriterOption {
	opts := []parquet.WriterOption{
		schema,
		parquet.Compression(&snappyFast{}),
		parquet.MaxRowsPerRowGroup(segmentRowGroupRows),
		parquet.PageBufferSize(segmentPageBytes),
		parquet.DataPageVersion(1),
		parquet.DefaultEncodingFor(parquet.ByteArray, &parquet.Plain),
		parquet.KeyValueMetadata(SchemaVersionKey, SchemaVersion),
		parquet.ColumnPageBuffers(pagePool),
	}
	for _, path := range schema.Columns() {
		opts = append(opts, parquet.SkipPageStatistics(path...), parquet.SkipPageBounds(path...))
	}
	return opts
}

// commitSegment commits a staged batch as a segment: its journal, marked as a segment's (which
// does not commit a batch- directory, journal.Segment), then the rename that makes it one.
// When the segment stays committed although the rename could not be made durable, the error
// wraps ErrCommitted.
func (w *Writer) commitSegment(b *batch) (segment, error) {
	b.segment = true
	if err := b.commit(); err != nil {
		return segment{}, err
	}
	id, err := uuid.NewV7()
	if err != nil {
		return segment{}, err
	}
	name := w.owner.segmentName(id)
	path := filepath.Join(w.cfg.Staging, name)
	if err := os.Rename(b.dir, path); err != nil {
		return segment{}, err
	}
	s := segment{name: name, created: time.Now(), entries: b.entries, delivered: b.delivered}
	for _, e := range b.entries {
		s.bytes += e.Bytes
	}
	if err := w.syncStaging(w.cfg.Staging); err != nil {
		// The segment is committed for every process, durable or not: reporting the write as
		// failed while it stays would have the caller send the batch again, and the segment
		// merged, by this writer or by whoever adopts it, as well: its rows twice. Reporting it
		// as written would acknowledge rows that a crash of the system may take back. So it is
		// un-committed: renamed back to its batch directory, which its segment's journal does
		// not commit, for the caller (writeSegment) to remove and the batch to be sent again.
		// The rename back is made durable by the retry's own fsync of this directory, before
		// the retry is acknowledged. Only when it fails is the segment kept, as the committed
		// batch it is (ErrCommitted: not to be sent again).
		if rerr := os.Rename(path, b.dir); rerr != nil {
			return s, fmt.Errorf("%w: %w", ErrCommitted, errors.Join(err, rerr))
		}
		return segment{}, err
	}
	return s, nil
}

// addSegment records a committed segment.
func (w *Writer) addSegment(s segment) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.segments = append(w.segments, s)
}

// due reports whether the staged segments must be merged now.
func (w *Writer) due(now time.Time) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.segments) == 0 {
		return false
	}
	var bytes int64
	for _, s := range w.segments {
		bytes += s.bytes
	}
	return bytes >= w.cfg.FileMaxStagedBytes || now.Sub(w.segments[0].created) >= w.cfg.FileMaxAge
}

// Flush merges and publishes the staged segments when they are due (all of them when force is
// set, as at shutdown). Without FileMaxAge Write stages nothing, and Flush only merges the
// segments Recover adopted from a run that had it. An
// error wrapping ErrCommitted means the merged files are durable and are published by the next
// Write, Flush, Close or Recover; otherwise the segments stay staged for the next Flush. A
// segment that cannot be read is set aside (Result.Unreadable), and the others are merged
// without it.
func (w *Writer) Flush(force bool) (Result, error) {
	retried, _ := w.retryPending() // in the result, as Write's
	now := time.Now()
	w.mu.Lock()
	adopt := w.staleAge > 0 && now.Sub(w.lastAdopted) >= adoptEvery
	if adopt {
		w.lastAdopted = now
	}
	w.mu.Unlock()
	var adoptErr error
	if adopt {
		adoptErr = w.adoptSegments(now.Add(-w.staleAge))
	}
	if !force && !w.due(now) {
		return Result{Files: retried}, adoptErr
	}
	w.merging.Lock()
	defer w.merging.Unlock()
	w.mu.Lock()
	segs := slices.Clone(w.segments)
	w.mu.Unlock()
	segs = w.dropVanished(segs)
	res := Result{Files: retried}
	for len(segs) > 0 {
		w.segmentWriters.release() // the merge is the largest heap of a paced run (segment_writers.go)
		b, err := w.mergeCommitted(segs, true)
		if err != nil {
			// Every segment is merged at every attempt, so one that cannot be read would keep
			// every later one from being published: it is set aside, and the others merged again.
			var setAside bool
			if segs, setAside, err = w.setAsideUnreadable(segs, err, &res); setAside {
				continue
			}
			return res, fmt.Errorf("merging %d staged segments: %w", len(segs), err)
		}
		// From here the journal owns the segments: they must not be merged a second time.
		w.forget(segs)
		files, err := w.publishCommitted(b)
		res.Files = append(res.Files, files...)
		return res, err
	}
	return res, nil
}

// unreadablePrefix names, in staging, a segment a merge could not read (setAsideUnreadable):
// neither merged nor adopted nor deleted, kept for an operator to examine. Its rows were
// acknowledged and are not published.
const unreadablePrefix = "unreadable-"

// UnreadableSegment is a staged segment Flush could not read, set aside in staging.
type UnreadableSegment struct {
	Path string // where it is now
	Err  error  // why it cannot be read
	// Rows are the rows its journal records, by dataset (Cases, Quarantine; Steps for a segment
	// of an earlier build): rows acknowledged and not published.
	Rows map[string]int
}

// mergeSourceError is a merge's failure on one segment file, reading it or writing its rows.
type mergeSourceError struct {
	path string
	err  error
}

func (e *mergeSourceError) Error() string { return e.err.Error() }
func (e *mergeSourceError) Unwrap() error { return e.err }

// setAsideUnreadable handles mergeErr, a failed merge of segs: when it failed on a segment that
// cannot be read on its own (readSegment), that segment is renamed into unreadablePrefix and
// recorded in res, and the other segments are returned with setAside, to be merged again. A
// segment gone meanwhile (adopted by another collector) is forgotten the same way. Otherwise
// (a full disk, say) nothing changes, and the error to return is given back.
func (w *Writer) setAsideUnreadable(segs []segment, mergeErr error, res *Result) (rest []segment, setAside bool, err error) {
	var src *mergeSourceError
	if !errors.As(mergeErr, &src) {
		return segs, false, mergeErr
	}
	name := filepath.Base(filepath.Dir(src.path))
	i := slices.IndexFunc(segs, func(s segment) bool { return s.name == name })
	if i < 0 {
		return segs, false, mergeErr
	}
	readErr := w.readSegment(segs[i])
	switch {
	case readErr == nil: // readable: the merge failed on something else
		return segs, false, mergeErr
	case errors.Is(readErr, fs.ErrNotExist):
		if _, err := os.Stat(filepath.Join(w.cfg.Staging, name)); !errors.Is(err, fs.ErrNotExist) {
			break // the directory is there, a file of it is not: unreadable
		}
		w.forget(segs[i : i+1])
		return slices.Delete(segs, i, i+1), true, nil
	}
	aside := filepath.Join(w.cfg.Staging, unreadablePrefix+name)
	if err := os.Rename(filepath.Join(w.cfg.Staging, name), aside); err != nil {
		return segs, false, errors.Join(mergeErr, fmt.Errorf("setting aside segment %s, which cannot be read (%w): %w", name, readErr, err))
	}
	res.Unreadable = append(res.Unreadable, UnreadableSegment{Path: aside, Err: readErr, Rows: segs[i].rowsByDataset()})
	w.forget(segs[i : i+1])
	return slices.Delete(segs, i, i+1), true, nil
}

// rowsByDataset is the rows the segment's journal records, by dataset (the first element of
// each file's final path).
func (s segment) rowsByDataset() map[string]int {
	rows := map[string]int{}
	for _, e := range s.entries {
		rows[e.dataset()] += e.Rows
	}
	return rows
}

// readSegment reads every value of every file of a staged segment as a merge reads them, and
// writes nothing: an error is the segment's.
func (w *Writer) readSegment(s segment) error {
	m := &columnMerge{w: w}
	for _, e := range s.entries {
		schema := w.stepsOfCases.caseSchema // of cases/ and quarantine/
		if strings.HasPrefix(filepath.ToSlash(e.Final), Steps+"/") {
			schema = schemaOf(w.stepOptions)
		}
		err := m.eachSourceRowGroup(filepath.Join(w.cfg.Staging, s.name, e.Staged), func(rg parquet.RowGroup) error {
			if !parquet.EqualNodes(rg.Schema(), schema) {
				return fmt.Errorf("%s: its schema is not its dataset's", e.Staged)
			}
			for _, chunk := range rg.ColumnChunks() {
				if err := m.eachPage(chunk, func([]parquet.Value) (bool, error) { return true, nil }); err != nil {
					return fmt.Errorf("%s: %w", e.Staged, err)
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// eachSourceRowGroup opens a segment file as a merge reads it and calls fn with each of its row
// groups, m set to read their pages (a segment written with GenericWriter.Write has its NULLs
// restored, segment_nulls.go).
func (m *columnMerge) eachSourceRowGroup(path string, fn func(parquet.RowGroup) error) error {
	f, df, err := open(path, parquet.SkipPageIndex(true)) // read in page order: no index needed
	if err != nil {
		return err
	}
	defer f.Close()
	pf := df.pf
	m.zeroNulls = nil
	if writtenWithWrite(pf) {
		if !parquet.EqualNodes(pf.Schema(), m.w.caseZeroNulls.schema) {
			return errors.New("a segment written with GenericWriter.Write has a schema other than cases/'s")
		}
		m.zeroNulls = m.w.caseZeroNulls
	}
	for _, rg := range pf.RowGroups() {
		if err := fn(rg); err != nil {
			return err
		}
	}
	return nil
}

// adoptEvery is how often Flush looks for segments left by a crashed process: not only at a
// restart, so that a writer sharing the root with a peer that died (and is not restarted)
// adopts the peer's committed segments at a Flush at most a minute after it is gone (at once if
// its owner lock tells it is gone, segment_owner.go; once staleAge old if nothing tells). An
// adopted segment counts as staged at its adoption: it is merged FileMaxAge later, or at the
// next Flush(true).
const adoptEvery = time.Minute

// forget removes segments from the writer's list.
func (w *Writer) forget(segs []segment) {
	gone := map[string]bool{}
	for _, s := range segs {
		gone[s.name] = true
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.segments = slices.DeleteFunc(w.segments, func(s segment) bool { return gone[s.name] })
}

// dropVanished forgets the segments whose directory is gone (another collector sharing the
// staging directory adopted them after this writer could not merge them for a long time) and
// returns the others.
func (w *Writer) dropVanished(segs []segment) []segment {
	var gone []segment
	segs = slices.DeleteFunc(segs, func(s segment) bool {
		_, err := os.Stat(filepath.Join(w.cfg.Staging, s.name))
		if errors.Is(err, os.ErrNotExist) {
			gone = append(gone, s)
			return true
		}
		return false
	})
	w.forget(gone)
	return segs
}

// mergeSource is one segment file a merged file takes rows from.
type mergeSource struct {
	path string
	// stepsOf says the file is of cases/, and the merged file is of steps/: it takes the steps
	// of the cases (merge_steps.go).
	stepsOf bool
	// longBounds are the statistics columns the file holds a value too long for (long_bounds.go).
	longBounds []string
}

// holdsSteps reports whether a segment has steps/ files: a segment staged by an earlier build
// that has accepted cases with steps. A segment staged now has none; its steps/ rows are made
// from its cases/ files at the merge.
func (s segment) holdsSteps() bool {
	return slices.ContainsFunc(s.entries, func(e journalEntry) bool {
		return strings.HasPrefix(filepath.ToSlash(e.Final), Steps+"/")
	})
}

// mergeSegments writes the rows of the segments into the batch's staging directory as one file
// per dataset and day (split at MaxRowsPerFile), steps/ first and cases/ last as Write does,
// each day's rows in segment order; in cases/ and quarantine/, the segments that store span
// ids once and the others go to separate files (one layout per file, ids_stored_once.go).
// steps/ takes the steps of each segment's cases/ files, or the segment's own steps/ files
// when it holds some (holdsSteps).
func (w *Writer) mergeSegments(b *batch, segs []segment) error {
	sources := map[string][]mergeSource{} // final directory (dataset/dt=…) → segment files, in order
	for _, s := range segs {
		stepsOfCases := !s.holdsSteps()
		for _, e := range s.entries {
			dir := filepath.ToSlash(filepath.Dir(e.Final))
			path := filepath.Join(w.cfg.Staging, s.name, e.Staged)
			sources[dir] = append(sources[dir], mergeSource{path: path, longBounds: e.LongBounds})
			if dataset, part, _ := strings.Cut(dir, "/"); dataset == Cases && stepsOfCases {
				sources[Steps+"/"+part] = append(sources[Steps+"/"+part], mergeSource{path: path, stepsOf: true, longBounds: e.LongBounds})
			}
		}
	}
	dirs := make([]string, 0, len(sources))
	for dir := range sources {
		dirs = append(dirs, dir)
	}
	sort.Slice(dirs, func(i, j int) bool {
		di, dj := strings.SplitN(dirs[i], "/", 2)[0], strings.SplitN(dirs[j], "/", 2)[0]
		if datasetOrder[di] != datasetOrder[dj] {
			return datasetOrder[di] < datasetOrder[dj]
		}
		return dirs[i] < dirs[j]
	})
	for _, dir := range dirs {
		dataset, part, _ := strings.Cut(dir, "/")
		dt := strings.TrimPrefix(part, PartitionKey+"=")
		if dataset != Steps { // a merged file has one layout of span ids (ids_stored_once.go)
			once, every, err := byLayout(sources[dir])
			if err == nil {
				err = w.mergeInto(b, dataset, dt, once, w.idsOnceOptions)
			}
			if err == nil {
				err = w.mergeInto(b, dataset, dt, every, w.caseOptions)
			}
			if err != nil {
				return err
			}
			continue
		}
		if err := w.mergeInto(b, dataset, dt, sources[dir], w.stepOptions); err != nil {
			return err
		}
	}
	return nil
}

// byLayout is byIDsLayout, its error naming the file it failed on (mergeSourceError).
func byLayout(files []mergeSource) (once, every []mergeSource, err error) {
	for _, src := range files {
		o, e, err := byIDsLayout([]mergeSource{src})
		if err != nil {
			return nil, nil, &mergeSourceError{path: src.path, err: err}
		}
		once, every = append(once, o...), append(every, e...)
	}
	return once, every, nil
}

// mergeRowGroupBytes bounds the row group a merge holds in memory, uncompressed: a merged file
// may hold many batches, and row groups of row_group_rows large cases would cost hundreds of
// MiB. Each row group repeats the metadata of every column in the footer (~35 KiB for cases/),
// so they should not be much smaller.
const mergeRowGroupBytes = 32 << 20

// mergeInto writes the rows of segment files of one dataset and day into files of at most
// MaxRowsPerFile rows, column by column (merge_columns.go, merge_steps.go); the writer flushes
// a row group every RowGroupRows rows or mergeRowGroupBytes, which bounds the memory it holds.
func (w *Writer) mergeInto(b *batch, dataset, dt string, sources []mergeSource, opts []parquet.WriterOption) error {
	var long []string
	for _, src := range sources {
		long = append(long, src.longBounds...)
	}
	opts = withoutBounds(opts, long)
	m := &columnMerge{w: w, b: b, dataset: dataset, dt: dt, opts: opts, schema: schemaOf(opts)}
	for _, src := range sources {
		err := m.eachSourceRowGroup(src.path, func(rg parquet.RowGroup) error {
			if src.stepsOf {
				return m.writeStepsOf(rg, w.stepsOfCases)
			}
			return m.copyRowGroup(rg)
		})
		if err != nil {
			m.abort()
			return &mergeSourceError{path: src.path, err: fmt.Errorf("merging %s into %s/%s=%s: %w", filepath.Base(src.path), dataset, PartitionKey, dt, err)}
		}
	}
	return m.finish()
}

// adoptSegments takes over the committed segments in staging that no writer has merged and that
// were left by a process that is gone (their owner's lock can be taken, segment_owner.go) or,
// when that cannot be told, were committed before staleBefore (a running writer merges its own
// within FileMaxAge). The segments of a live owner (its lock is held) are never taken: it
// merges them itself. Several collectors may share a staging directory, so a segment is
// claimed by renaming it to a new name first; only one claimant's rename succeeds, and no row
// is merged twice. A segment that a committed merge's journal names is not adopted
// (mergedSegments). Where the owner cannot be told (a segment of a build that named none, a
// system without file locks), only the journals committed when staging is listed are seen: a
// live writer whose own segment is older than staleBefore may commit a merge of it after that.
func (w *Writer) adoptSegments(staleBefore time.Time) error {
	// The writer's own segments are listed before staging is. A concurrent Flush forgets the
	// segments it merges only once the merge's journal is committed: listed after staging, a
	// segment forgotten after mergedSegments read that journal's directory (not committed yet)
	// would look like nobody's, be adopted, and its rows be published a second time. Listed
	// first, a segment missing from known was forgotten before the listing, so its merge's journal
	// is in the listing, or was published and removed, the segment with it.
	w.mu.Lock()
	known := map[string]bool{}
	for _, s := range w.segments {
		known[s.name] = true
	}
	w.mu.Unlock()
	entries, err := os.ReadDir(w.cfg.Staging)
	if err != nil {
		return err
	}
	merged, err := mergedSegments(w.cfg.Staging, entries)
	if err != nil {
		return err // which segments a merge owns is not known: none is adopted this time
	}
	if w.afterStagingListed != nil {
		w.afterStagingListed()
	}
	var adopted []segment
	var errs []error
	owners := &goneOwners{staging: w.cfg.Staging, checked: map[string]checkedOwner{}}
	defer owners.close()
	now := time.Now()
	for _, entry := range entries {
		owners.checkOwnerFile(entry, now) // a live writer's, this one's included, is locked
		if !entry.IsDir() || !strings.HasPrefix(entry.Name(), segmentPrefix) || known[entry.Name()] || merged[entry.Name()] {
			continue
		}
		owner := ownerOf(entry.Name())
		mine := w.owner != nil && owner == w.owner.id
		switch state := owners.state(owner); {
		case !mine && state == ownerAlive:
			continue // its writer merges it
		case mine || state != ownerGone:
			if info, err := entry.Info(); err != nil || info.ModTime().After(staleBefore) {
				continue
			}
		}
		id, err := uuid.NewV7()
		if err != nil {
			return err
		}
		s := segment{name: w.owner.segmentName(id), created: time.Now()}
		if err := os.Rename(filepath.Join(w.cfg.Staging, entry.Name()), filepath.Join(w.cfg.Staging, s.name)); err != nil {
			continue // claimed by another writer
		}
		b, err := readBatch(w.cfg.Root, filepath.Join(w.cfg.Staging, s.name))
		if err != nil {
			errs = append(errs, fmt.Errorf("reading segment %s: %w", s.name, err))
			continue
		}
		s.entries, s.delivered = b.entries, b.delivered
		for _, e := range b.entries {
			s.bytes += e.Bytes
		}
		adopted = append(adopted, s)
	}
	// Before a merge of this writer can take them; a segment a merge would set aside unread
	// (unpublished) has its cases written when they are delivered or sent again.
	for _, s := range w.adopted.remember(w, adopted, time.Now()) {
		if len(s.delivered) > 0 {
			w.delivered.keep("", readDigests(s.delivered), len(s.delivered)/digestSize, time.Now())
		}
	}
	w.mu.Lock()
	w.segments = append(w.segments, adopted...)
	w.mu.Unlock()
	return errors.Join(errs...)
}

// mergedSegments names the segments that the committed merges among entries (the listing of
// staging) consumed. Their rows are in the merge's files, and whoever publishes them (the
// merge's writer, or Recover, after a crash) removes them; adopted, they would be merged and
// published a second time. A merge published and removed since the listing removed its
// segments first, so they are gone from staging too.
func mergedSegments(staging string, entries []os.DirEntry) (map[string]bool, error) {
	merged := map[string]bool{}
	for _, entry := range entries {
		if !entry.IsDir() || !strings.HasPrefix(entry.Name(), batchPrefix) {
			continue
		}
		b, err := readBatch("", filepath.Join(staging, entry.Name()))
		if errors.Is(err, fs.ErrNotExist) { // not committed, or published since
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading the journal of %s: %w", entry.Name(), err)
		}
		for _, s := range b.segments {
			merged[s] = true
		}
	}
	return merged, nil
}
