package dataset

import (
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/reprise-dev/reprise/replaycase"
)

// Cases sent again after a crash.
//
// The processor deletes a case's write-ahead records only once the exporter has written it,
// so a collector killed between the two sends the case again after its restart, rebuilt from
// the records under the same case_id, and marks it replaycase.Case.Resent. The copy written
// before the crash is in one of two places. With file_max_age it may still be in a segment of
// the killed process, which the restarted writer adopts (adoptSegments): the writer remembers
// the case ids of every segment it adopts. Or it was published before the crash (merged, or
// without file_max_age published at once): the first time Write meets a marked case that no
// adopted segment holds, the writer reads, once, the case ids of the cases/ and quarantine/
// files published within adoptedIDsFor before then, and remembers them the same way
// (readPublished). Or, with a persistent sending_queue (tier 2, docs/scale-out.md), the copy
// was still in the queue at the kill and is written after the restart, possibly after that
// read: so from the read on, for as long as it is remembered, a writer with SkipRedelivered
// (the exporter's persistent queue) remembers the cases it writes too (wroteAfterRead; at most
// maxAdoptedIDs, 96 MiB in one map (BenchmarkAdoptedIDsAtTheBound), for an hour after a restart that resent cases). Without a queue no
// copy is written after the restart but the marked case itself, so nothing more is remembered. Write drops a marked case whose id it remembers. A copy
// whose Write is still running when the marked case's Write looks (two queue consumers at
// once) is not known: the case is written twice.
//
// An unmarked case is never dropped: a re-drive writes a newer row under the same case_id on
// purpose. Nor is a marked case that holds other counts of spans or events than the stored
// copy: spans of its trace that arrived late, between the write and the crash, were stored and
// are rebuilt into it, and the copy lacks them (readers keep the newer row); nor one whose
// verdict differs from the stored row's: a re-drive killed before it wrote a case it accepted
// sends it again, and the quarantine row it read is no copy of it; nor one read from another
// source row (metadata MetaRedrivenFrom): a copy (the replay_parquet receiver's emit: cases)
// killed between a push and its checkpoint pushes that batch again marked Resent too, and a
// case re-driven and quarantined again has two rows of the same counts and verdict. A copy the writer
// cannot read (a segment set aside, a published file it fails to read) is not known, and the
// case is written again: two rows under one case_id, which readers deduplicate, are better
// than a lost case.
//
// The published files read are those of the local root: an object store is a mirror of it
// (objectstore.go), and retention keeps a file there an hour by default (Retention.MinFileAge).
// A peer writer sharing the root has its recent files read too: a marked case one of them holds
// with the same counts is in the dataset, and dropping it loses nothing. A peer that adopted
// the killed writer's segments and merges them after the read is not known: such a case is
// written twice.

const (
	// adoptedIDsFor is how long the ids of an adopted segment are remembered: the processor
	// restores its records at the start the writer adopts at, and sends their cases within
	// its timeouts (minutes).
	adoptedIDsFor = time.Hour
	// maxAdoptedIDs bounds the ids remembered (16 bytes each); the oldest adoptions are
	// forgotten first.
	maxAdoptedIDs = 1 << 20
)

// adoptedCaseIDs are the case ids of the segments a writer adopted, by adoption, and of the
// files published before it read them (readPublished), as one more adoption.
type adoptedCaseIDs struct {
	mu        sync.Mutex
	adoptions expiringSets[[16]byte, telemetryCount]
	// published reads the recently published files once (readPublished); a concurrent Write
	// with a marked case waits for it.
	published sync.Once
	// readUntil is when what that read found is forgotten; until then the cases this writer
	// writes are remembered too (wroteAfterRead). Zero before the read. Guarded by mu.
	readUntil time.Time
}

// telemetryCount is what a case was built from, its spans and GenAI events, and the verdict
// on it. A copy written before a crash has the verdict of the case sent again; a row of the
// same case with another one is not a copy: the quarantine row a re-drive read, whose case the
// re-drive accepted, is built from the same spans (TestARedrivenCaseSentAgainAfterACrashIsNotTakenForItsQuarantineRow).
//
// redrivenFrom is the hash (FNV-1a, 32 bits) of the row's metadata[MetaRedrivenFrom], the source
// row a re-drive or a copy read it from: a copy (the replay_parquet receiver's emit: cases) of
// a case re-driven and quarantined again holds two rows of it from the same spans with the
// same verdict, and the copy of the older one is no copy of the newer one
// (TestACopyKilledBeforeTheExporterTookTheNewerRowOfACaseWritesIt). It fits in the padding
// after quarantined: an entry takes no more memory.
type telemetryCount struct {
	spans, events int64
	quarantined   bool
	redrivenFrom  uint32
}

// MetaRedrivenFrom is the metadata key of the row a case was re-driven or copied from (the
// replay_parquet receiver's), "<dataset>/dt=<day>/<file>#<row>".
const MetaRedrivenFrom = "redriven_from"

// countOf is what a row was built from: spans and events, its verdict, and its metadata's
// source row (hashed with FNV-1a inline: it runs for every case written in the hour after a
// read, and hash/fnv's Write would copy the string).
func countOf(spans, events int64, status replaycase.Status, metadata map[string]string) telemetryCount {
	h := uint32(2166136261)
	for _, b := range []byte(metadata[MetaRedrivenFrom]) {
		h = (h ^ uint32(b)) * 16777619
	}
	return telemetryCount{spans, events, status == replaycase.StatusQuarantined, h}
}

// caseIDKey is a case id (32 hex digits, replaycase.ID) as 16 bytes; ok is false for any other
// string.
func caseIDKey(id string) (key [16]byte, ok bool) {
	if len(id) != 2*len(key) {
		return key, false
	}
	_, err := hex.Decode(key[:], []byte(id))
	return key, err == nil
}

// remember records the case ids of adopted segments, and returns the segments it read. Only a
// segment that reads whole (readSegment) is remembered: a merge sets aside one it cannot read,
// unpublished, and a case sent again must then be written. A segment skipped so is adopted all
// the same; its cases, when sent again, are written again (two rows under one case_id, which
// readers deduplicate).
func (a *adoptedCaseIDs) remember(w *Writer, segs []segment, now time.Time) (whole []segment) {
	var rows []caseIDRow
	for _, s := range segs {
		if w.readSegment(s) != nil {
			continue
		}
		whole = append(whole, s)
		of, _ := segmentCaseIDs(w, s) // none on an error: then nothing of it is remembered
		rows = append(rows, of...)
	}
	a.add(rows, now)
	return whole
}

// add remembers the case ids and counts of rows as one adoption, from now for adoptedIDsFor.
func (a *adoptedCaseIDs) add(rows []caseIDRow, now time.Time) {
	ids := map[[16]byte]telemetryCount{}
	for _, row := range rows {
		if key, ok := caseIDKey(row.CaseID); ok && len(ids) < maxAdoptedIDs {
			ids[key] = countOf(row.Provenance.SpanCount, row.Provenance.EventCount, row.Status, row.Metadata)
		}
	}
	if len(ids) == 0 {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.adoptions.add(expiringSet[[16]byte, telemetryCount]{until: now.Add(adoptedIDsFor), keys: ids, n: len(ids)}, maxAdoptedIDs, now)
}

// dropResent returns the cases without those marked Resent that an adopted segment or a
// recently published file holds, and the ids of those it left out. The published files are
// read the first time a marked case is not in an adopted segment; a batch without a marked
// case never reads them.
func (w *Writer) dropResent(cases []*replaycase.Case, now time.Time) (kept []*replaycase.Case, dropped []string) {
	kept, dropped = w.adopted.dropResent(cases, now)
	if !slices.ContainsFunc(kept, isResent) {
		return kept, dropped
	}
	w.adopted.published.Do(func() { w.adopted.addRead(readPublished(w.cfg.Root, w.started), now) })
	kept, more := w.adopted.dropResent(kept, now)
	return kept, append(dropped, more...)
}

func isResent(c *replaycase.Case) bool { return c.Resent }

// addRead remembers what readPublished found, and from now on, for as long, the cases this
// writer writes (wroteAfterRead).
func (a *adoptedCaseIDs) addRead(rows []caseIDRow, now time.Time) {
	a.add(rows, now)
	a.mu.Lock()
	a.readUntil = now.Add(adoptedIDsFor)
	a.mu.Unlock()
}

// wroteAfterRead remembers the cases a Write committed after the published files were read,
// until what the read found is forgotten. The read sees only the files published before it,
// and the first marked case can come before the copies of the others are written: in tier 2
// (docs/scale-out.md) a kill after the processor handed cases to the persistent queue and
// before it released their records leaves their copies in the queue, which writes them after
// the restart, while a marked case the processor sends at once (cut at max_spans_per_trace,
// closed early past max_open_traces) already made the writer read. The marked copies the
// processor sends later were written a second time.
func (a *adoptedCaseIDs) wroteAfterRead(cases []*replaycase.Case, now time.Time) {
	a.mu.Lock()
	remember := now.Before(a.readUntil)
	a.mu.Unlock()
	if !remember {
		return
	}
	rows := make([]caseIDRow, len(cases))
	for i, c := range cases {
		rows[i].CaseID = c.CaseID
		rows[i].Provenance.SpanCount, rows[i].Provenance.EventCount = c.Provenance.SpanCount, c.Provenance.EventCount
		rows[i].Status, rows[i].Metadata = c.Status, c.Metadata
	}
	a.add(rows, now)
}

// readPublished reads the case ids and counts of the cases/ and quarantine/ files under root
// that the crash can have left copies in of the cases the processor sends again: those
// published since started (the writer's start: the batches Recover rolled forward, given the
// time of their publication) and, of the files published before it, those modified within
// adoptedIDsFor before the newest of them. The copies were published in the last minutes
// before the crash, however long the collector stayed down after it: an hour before the
// restart missed every copy of a night's outage. Only those columns are decoded. A
// file or partition it cannot read is skipped: the cases it holds, sent again, are written
// again. The newest files come first: past maxAdoptedIDs, add keeps the first rows, and the
// copies a crash left are in the files published last.
func readPublished(root string, started time.Time) []caseIDRow {
	files, _ := NewLister(root, Cases, Quarantine).Next() // what it could list
	type recent struct {
		path     string
		modified time.Time
	}
	var all []recent
	var crashed time.Time // the newest file's time before started: about when the last run ended
	for _, f := range files {
		if info, err := os.Stat(f.Path); err == nil {
			all = append(all, recent{f.Path, info.ModTime()})
			if info.ModTime().Before(started) && info.ModTime().After(crashed) {
				crashed = info.ModTime()
			}
		}
	}
	var within []recent
	for _, f := range all {
		if !f.modified.Before(crashed.Add(-adoptedIDsFor)) {
			within = append(within, f)
		}
	}
	slices.SortStableFunc(within, func(a, b recent) int { return b.modified.Compare(a.modified) })
	var rows []caseIDRow
	for _, f := range within {
		if of, err := readCaseIDs(f.path); err == nil {
			rows = append(rows, of...)
		}
	}
	return rows
}

// dropResent returns the cases without those marked Resent that an adoption holds (the same
// case_id, built from as many spans and events, with the same verdict, from the same source
// row), and the ids of those it left out. Without a
// marked case it takes no lock and copies nothing.
func (a *adoptedCaseIDs) dropResent(cases []*replaycase.Case, now time.Time) (kept []*replaycase.Case, dropped []string) {
	if !slices.ContainsFunc(cases, isResent) {
		return cases, nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.adoptions.expire(maxAdoptedIDs, now)
	if len(a.adoptions.sets) == 0 {
		return cases, nil
	}
	kept = make([]*replaycase.Case, 0, len(cases))
	for _, c := range cases {
		if c.Resent && a.holds(c) {
			dropped = append(dropped, c.CaseID)
			continue
		}
		kept = append(kept, c)
	}
	return kept, dropped
}

// holds reports whether an adopted segment held c: its case id, built from as many spans and
// events, with the same verdict, read from the same source row. Caller holds mu.
func (a *adoptedCaseIDs) holds(c *replaycase.Case) bool {
	key, ok := caseIDKey(c.CaseID)
	if !ok {
		return false
	}
	built := countOf(c.Provenance.SpanCount, c.Provenance.EventCount, c.Status, c.Metadata)
	return a.adoptions.holds(key, func(held telemetryCount) bool { return held == built })
}

// caseIDRow is the projection segmentCaseIDs reads: parquet-go decodes these columns alone.
type caseIDRow struct {
	CaseID     string            `parquet:"case_id"`
	Status     replaycase.Status `parquet:"status"`
	Metadata   map[string]string `parquet:"metadata"`
	Provenance struct {
		SpanCount  int64 `parquet:"span_count"`
		EventCount int64 `parquet:"event_count"`
	} `parquet:"provenance"`
}

// segmentCaseIDs reads the case ids and telemetry counts of a staged segment's cases/ and
// quarantine/ files (one batch's: few rows).
func segmentCaseIDs(w *Writer, s segment) ([]caseIDRow, error) {
	var ids []caseIDRow
	for _, e := range s.entries {
		if ds := e.dataset(); ds != Cases && ds != Quarantine {
			continue
		}
		rows, err := readCaseIDs(filepath.Join(w.cfg.Staging, s.name, e.Staged))
		if err != nil {
			return nil, err
		}
		ids = append(ids, rows...)
	}
	return ids, nil
}
