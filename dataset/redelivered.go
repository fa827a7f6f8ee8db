package dataset

import (
	"crypto/sha256"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/reprise-dev/reprise/replaycase"
)

// Cases a persistent queue delivers again after a crash (WriterConfig.SkipRedelivered).
//
// The exporter's persistent queue forgets a batch only once Write has returned: a collector
// killed between the commit of a batch and that moment gets the batch again after its restart.
// Not as it was: the queue puts the items it was handing out back at its end, where they are
// batched anew with others, so only a case, not a batch, is delivered again as it was. Write
// therefore takes a digest of each case as delivered (its JSON, which holds its case_id: a case
// sent again with other content, a re-drive, has another) and commits the digests of the cases
// it writes with the batch: in its journal, or its segment's and then the merge's. Publishing
// the batch keeps them in staging as delivered-<batch>; the next Recover reads those files, and
// adoptSegments the digests of the segments it adopts. Write leaves out a case whose digest is
// among them (Result.Redelivered). A crash before the commit leaves no digest: the rolled back
// batch is written when delivered again. Nor do a batch Recover publishes with files missing
// and an adopted segment that does not read whole (which a merge sets aside) count: their rows
// may not be in the dataset.

const (
	// deliveredFor is how long digests are remembered after the start that read them, and kept
	// in staging after their publish: the queue hands the items back at its start, behind its
	// backlog, which it drains in minutes.
	deliveredFor = time.Hour
	// maxDelivered bounds the digests remembered and kept (16 bytes each); the oldest go first.
	maxDelivered = 1 << 20
	// deliveredPrefix names the files in staging that keep the digests of published batches.
	deliveredPrefix = "delivered-"
	digestSize      = 16
)

type caseDigest [digestSize]byte

// digestsOf returns the digest of each case, in order: the first 16 bytes of SHA-256 of its
// JSON. A case that cannot be encoded (a NaN parameter) gets none (nil), and is always written.
func digestsOf(cases []*replaycase.Case) []*caseDigest {
	out := make([]*caseDigest, len(cases))
	for i, c := range cases {
		if data, err := json.Marshal(c); err == nil {
			sum := sha256.Sum256(data)
			out[i] = (*caseDigest)(sum[:digestSize])
		}
	}
	return out
}

// deliveredDigests are the digests a writer read back, and the files it keeps them in.
type deliveredDigests struct {
	mu   sync.Mutex
	kept expiringSets[caseDigest, bool] // a set's keys are nil for a file this writer wrote: only a restart reads it back
}

// keep records n digests (held in file, or read back as digests) until deliveredFor from now;
// file, "" for a segment's, is removed when they are forgotten.
func (d *deliveredDigests) keep(file string, digests map[caseDigest]bool, n int, now time.Time) {
	set := expiringSet[caseDigest, bool]{until: now.Add(deliveredFor), keys: digests, n: n}
	if file != "" {
		set.forgotten = func() { os.Remove(file) }
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.kept.add(set, maxDelivered, now)
}

// readDigests reads back the digests of raw (a journal's or a file's) into a set.
func readDigests(raw []byte) map[caseDigest]bool {
	set := make(map[caseDigest]bool, len(raw)/digestSize)
	for ; len(raw) >= digestSize; raw = raw[digestSize:] {
		set[caseDigest(raw[:digestSize])] = true
	}
	return set
}

// drop returns the cases whose digest is not remembered, the digests of those (to commit with
// them), and the ids of the others.
func (d *deliveredDigests) drop(cases []*replaycase.Case, now time.Time) (kept []*replaycase.Case, digests []byte, dropped []string) {
	of := digestsOf(cases)
	d.mu.Lock()
	defer d.mu.Unlock()
	d.kept.expire(maxDelivered, now)
	kept = make([]*replaycase.Case, 0, len(cases))
	for i, c := range cases {
		if of[i] == nil {
			kept = append(kept, c)
			continue
		}
		if d.kept.holds(*of[i], func(bool) bool { return true }) {
			dropped = append(dropped, c.CaseID)
			continue
		}
		kept = append(kept, c)
		digests = append(digests, of[i][:]...)
	}
	return kept, digests, dropped
}

// load reads back the digests kept in staging. Without SkipRedelivered it only removes the files
// older than deliveredFor, which no writer reads back any more (a collector sharing staging
// may read the younger ones).
func (d *deliveredDigests) load(staging string, skip bool, now time.Time) {
	entries, _ := os.ReadDir(staging)
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), deliveredPrefix) || strings.HasSuffix(e.Name(), ".tmp") {
			continue
		}
		path := filepath.Join(staging, e.Name())
		if !skip {
			if info, err := e.Info(); err == nil && info.ModTime().Before(now.Add(-deliveredFor)) {
				os.Remove(path)
			}
			continue
		}
		if raw, err := os.ReadFile(path); err == nil && len(raw)%digestSize == 0 {
			d.keep(path, readDigests(raw), len(raw)/digestSize, now)
		}
	}
}

// keepDelivered writes the digests of a published batch to staging, where the next Recover reads
// them back, before its journal, which holds them, is removed; it returns the file, "" when
// the batch has none.
func (b *batch) keepDelivered() (string, error) {
	if len(b.delivered) == 0 {
		return "", nil
	}
	staging := filepath.Dir(b.dir)
	path := filepath.Join(staging, deliveredPrefix+filepath.Base(b.dir))
	if err := writeSynced(path+".tmp", b.delivered); err != nil {
		return "", err
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		return "", err
	}
	return path, syncDir(staging)
}

// keptDelivered records the file a published batch kept its digests in, to remove it once
// deliveredFor old.
func (w *Writer) keptDelivered(b *batch) {
	if b.kept != "" {
		w.delivered.keep(b.kept, nil, len(b.delivered)/digestSize, time.Now())
	}
}
