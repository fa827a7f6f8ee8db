package dataset

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Publishing: the one place where files become visible.
//
// A batch is written into its own directory in staging, staging/batch-<uuidv7>/, every file
// complete and fsynced. Then its journal, staging/batch-…/PUBLISH.json, is written (to a
// temporary name, fsynced, renamed, directory fsynced): from that moment the batch is
// committed. Then each file is renamed into <root>/<dataset>/dt=…/ in the journal's order
// (steps/, quarantine/, cases/) and each target directory is fsynced; last, the batch
// directory is removed.
//
//   - A crash before the journal exists leaves only files in staging: Recover deletes them
//     (rolls back) and the batch, never acknowledged, is sent again by the exporter's queue.
//   - A crash after it rolls forward: Recover finishes the renames the journal lists.
//
// A segment (segments.go) has a journal too, marked as a segment's: its commit is the rename of
// its directory, so Recover treats a batch- directory holding such a journal as uncommitted.
//
// So a batch's files become visible together or not at all, and in an order where a reader
// never sees a case row without its steps rows (for the milliseconds of a publish, or until
// the restart after a crash, it may see steps rows whose case row is not there yet).

const journalName = "PUBLISH.json"

// batchPrefix names batch directories in staging.
const batchPrefix = "batch-"

// journalEntry is one file of a committed batch.
type journalEntry struct {
	Staged string `json:"staged"` // name in the batch directory
	Final  string `json:"final"`  // slash-separated path under the root
	Rows   int    `json:"rows"`
	Bytes  int64  `json:"bytes"`
	// LongBounds, in a segment's journal, are the statistics columns in which the file holds a
	// value too long for statistics: the merged file has none for them (long_bounds.go).
	LongBounds []string `json:"long_bounds,omitempty"`
}

// dataset is the dataset the entry's file is published in (cases, quarantine, steps): the first
// element of its final path.
func (e journalEntry) dataset() string {
	ds, _, _ := strings.Cut(e.Final, "/")
	return ds
}

type journal struct {
	SchemaVersion string         `json:"schema_version"`
	Files         []journalEntry `json:"files"`
	// Segments are the staged segments (segments.go) whose rows the files hold: publishing
	// the files removes them.
	Segments []string `json:"segments,omitempty"`
	// Segment marks the journal of a segment (segments.go), which its directory's rename from
	// batch-… to segment-… commits, not the journal itself: in a batch- directory it is a
	// segment whose writer died before that rename, never acknowledged, which Recover deletes
	// like any uncommitted batch. Publishing its files would publish cases/ rows without their
	// steps/ rows, in a segment's profile, and a second time when the caller sends the batch
	// again.
	Segment bool `json:"segment,omitempty"`
	// Delivered are the digests of the cases the files hold, with SkipRedelivered: publishing
	// the files keeps them in staging (redelivered.go).
	Delivered []byte `json:"delivered,omitempty"`
}

type batch struct {
	root, dir string
	entries   []journalEntry
	segments  []string
	// segment: the batch is staged as a segment, committed by a rename (journal.Segment).
	segment bool
	// scratch: the batch is a segment merged into another batch at once and never committed
	// (Writer.publishSegment), so its files are not synced.
	scratch bool
	// recovering: the batch is published by Recover, where a file neither staged nor published
	// is recorded in missing rather than failing the publish (see Recover).
	recovering bool
	missing    []journalEntry
	// delivered are the digests of the batch's cases (journal.Delivered); kept names the file
	// publish kept them in.
	delivered []byte
	kept      string
}

func newBatch(cfg WriterConfig) (*batch, error) {
	id, err := uuid.NewV7()
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(cfg.Staging, batchPrefix+id.String())
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, err
	}
	return &batch{root: cfg.Root, dir: dir}, nil
}

// commit writes the journal durably.
func (b *batch) commit() error {
	data, err := json.MarshalIndent(journal{SchemaVersion: SchemaVersion, Files: b.entries, Segments: b.segments, Segment: b.segment, Delivered: b.delivered}, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(b.dir, journalName+".tmp")
	if err := writeSynced(tmp, data); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(b.dir, journalName)); err != nil {
		return err
	}
	return syncDir(b.dir)
}

// publish renames every file of a committed batch into the root, then removes the batch
// directory. It can be repeated: a file already renamed by an earlier attempt (or by another
// process recovering the same staging directory) is skipped.
func (b *batch) publish(afterRename func(int) error) error {
	for i, e := range b.entries {
		final := filepath.Join(b.root, filepath.FromSlash(e.Final))
		staged := filepath.Join(b.dir, e.Staged)
		if b.recovering {
			if _, err := os.Lstat(staged); errors.Is(err, fs.ErrNotExist) {
				switch _, err := os.Stat(final); {
				case err == nil:
					continue // published before the crash
				case errors.Is(err, fs.ErrNotExist):
					b.missing = append(b.missing, e) // neither staged nor published (Recovery.Missing)
					continue
				default:
					return err
				}
			}
		}
		dir := filepath.Dir(final)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		err := os.Rename(staged, final)
		if errors.Is(err, fs.ErrNotExist) {
			if _, statErr := os.Stat(final); statErr == nil {
				continue
			}
		}
		if err != nil {
			return err
		}
		if b.recovering {
			// A rename keeps the time the file was staged, maybe hours before the crash: as
			// published then, the copies it holds would not be read for the cases sent again
			// (readPublished), and retention would not give it its hour.
			now := time.Now()
			if err := os.Chtimes(final, now, now); err != nil {
				return err
			}
		}
		if err := syncDir(dir); err != nil {
			return err
		}
		if afterRename != nil {
			if err := afterRename(i + 1); err != nil {
				return err
			}
		}
	}
	if len(b.missing) == 0 { // rows that may be lost are written again when delivered again
		var err error
		if b.kept, err = b.keepDelivered(); err != nil {
			return err
		}
	}
	staging := filepath.Dir(b.dir)
	for _, s := range b.segments {
		if err := os.RemoveAll(filepath.Join(staging, s)); err != nil {
			return err
		}
	}
	if len(b.missing) > 0 {
		// The journal is the only record of what the missing files were: kept for an operator,
		// under a name nothing in staging acts on. Gone already: another process recovering
		// this staging directory set it aside.
		err := os.Rename(b.dir, filepath.Join(staging, missingPrefix+filepath.Base(b.dir)))
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	return os.RemoveAll(b.dir)
}

// missingPrefix names, in staging, the journal directory of a batch Recover published with
// files missing (Recovery.Missing).
const missingPrefix = "missing-"

func (b *batch) discard() { os.RemoveAll(b.dir) }

// published lists the files of a published batch, but for the missing ones.
func (b *batch) published() []Published {
	out := make([]Published, 0, len(b.entries))
	for _, e := range b.entries {
		if slices.ContainsFunc(b.missing, func(m journalEntry) bool { return m.Staged == e.Staged }) {
			continue
		}
		out = append(out, b.publishedAs(e))
	}
	return out
}

func (b *batch) publishedAs(e journalEntry) Published {
	f, _ := fileOf(b.root, filepath.Join(b.root, filepath.FromSlash(e.Final)))
	return Published{File: f, Rows: e.Rows, Bytes: e.Bytes}
}

// Recovery is what Recover found in staging.
type Recovery struct {
	RolledForward []Published // files of committed batches it published
	RolledBack    int         // uncommitted batches (and stray temporary files) it deleted
	// Missing are files of committed batches that were neither in staging nor at their place
	// in the root: published before the crash and removed since (by retention, an operator), or
	// removed from staging before they were published, their rows lost. Nothing tells which;
	// the caller must report each (File.Path is where it belonged, Rows how many it held). The
	// batch's journal is kept in staging as missing-batch-… for an operator to examine.
	Missing []Published
}

// Recover finishes what a process that died while publishing left in staging: it publishes
// every committed batch, and deletes uncommitted batches and temporary files last modified
// before staleBefore. Uncommitted batches younger than that may belong to another collector
// writing into the same root right now, so they are left alone. Committed segments
// (segments.go) committed before staleBefore are adopted for the next Flush; younger ones may
// belong to a running collector, and Flush adopts them once they are as old. A file of a
// committed batch that is neither staged nor published does not stop it: it is listed in
// Recovery.Missing, for the caller to report.
func (w *Writer) Recover(staleBefore time.Time) (Recovery, error) {
	var rec Recovery
	entries, err := os.ReadDir(w.cfg.Staging)
	if err != nil {
		return rec, err
	}
	var errs []error
	for _, entry := range entries {
		path := filepath.Join(w.cfg.Staging, entry.Name())
		if entry.IsDir() && strings.HasPrefix(entry.Name(), batchPrefix) {
			b, err := readBatch(w.cfg.Root, path)
			switch {
			case err == nil && b.segment:
				// Not committed: its writer died between the journal and the rename that commits
				// a segment (journal.Segment). Deleted below once stale; younger, it may be another
				// collector's, about to be renamed.
			case err == nil:
				b.recovering = true
				err := b.publish(nil)
				for _, e := range b.missing {
					rec.Missing = append(rec.Missing, b.publishedAs(e))
				}
				if err != nil {
					errs = append(errs, fmt.Errorf("publishing %s: %w", entry.Name(), err))
					continue
				}
				rec.RolledForward = append(rec.RolledForward, b.published()...)
				continue
			case !errors.Is(err, fs.ErrNotExist):
				errs = append(errs, fmt.Errorf("reading the journal of %s: %w", entry.Name(), err))
				continue
			}
		}
		info, err := entry.Info()
		if err != nil || info.ModTime().After(staleBefore) {
			continue
		}
		if entry.IsDir() && !strings.HasPrefix(entry.Name(), batchPrefix) {
			continue
		}
		if !entry.IsDir() && !strings.HasSuffix(entry.Name(), ".tmp") {
			continue
		}
		if os.RemoveAll(path) == nil {
			rec.RolledBack++
		}
	}
	w.delivered.load(w.cfg.Staging, w.cfg.SkipRedelivered, time.Now()) // those of the batches rolled forward too
	w.mu.Lock()
	w.staleAge = time.Since(staleBefore)
	w.mu.Unlock()
	if err := w.adoptSegments(staleBefore); err != nil {
		errs = append(errs, err)
	}
	return rec, errors.Join(errs...)
}

// readBatch loads a batch from its journal; fs.ErrNotExist means not committed. A segment's
// journal (b.segment) in a batch- directory does not commit it either (journal.Segment).
func readBatch(root, dir string) (*batch, error) {
	data, err := os.ReadFile(filepath.Join(dir, journalName))
	if err != nil {
		return nil, err
	}
	var j journal
	if err := json.Unmarshal(data, &j); err != nil {
		return nil, err
	}
	for _, e := range j.Files {
		if filepath.IsAbs(e.Final) || strings.Contains(e.Final, "..") || strings.Contains(e.Staged, "/") {
			return nil, fmt.Errorf("journal entry %q → %q leaves the dataset", e.Staged, e.Final)
		}
	}
	for _, s := range j.Segments {
		if !strings.HasPrefix(s, segmentPrefix) || strings.ContainsAny(s, `/\`) || strings.Contains(s, "..") {
			return nil, fmt.Errorf("journal segment %q is not a segment of this staging directory", s)
		}
	}
	if len(j.Delivered)%digestSize != 0 {
		return nil, fmt.Errorf("journal digests of %d bytes, not a multiple of %d", len(j.Delivered), digestSize)
	}
	return &batch{root: root, dir: dir, entries: j.Files, segments: j.Segments, segment: j.Segment, delivered: j.Delivered}, nil
}

// writeSynced writes data to a new file and fsyncs it.
func writeSynced(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// syncDir makes a rename durable.
func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}
