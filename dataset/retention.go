package dataset

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Retention: expiring what is old, by the age of its dt= partition.
//
// A partition dt=D holds cases that started on day D (UTC), so it is complete at the end of
// that day; it expires MaxAge after that. Only published data files (*.parquet) are deleted,
// one by one, then the partition directory if nothing else is left in it. A file younger than
// MinFileAge is never deleted, whatever its partition says: it was just published (a re-driven
// old case, or a batch rolled forward after a crash), possibly by another collector writing
// into the same root, and its directory is left in place. Files being written are in the staging
// directory, never under the root, so they cannot be touched. With an object store mirroring the
// root (Retention.Uploaded), a file the bucket does not hold yet is never deleted either: the local
// copy is the only one until its upload succeeds, and what the upload is retried from. The
// steps/ files of a day go only once the cases/ partition of that day holds no file: a case that
// stays for any of these reasons keeps its steps, which a replay needs.

// Retention is how long each dataset keeps its partitions. A zero age keeps them forever.
type Retention struct {
	// Cases applies to cases/ and steps/ together: a case row never outlives its steps rows
	// (a day's steps files wait for its cases files to go, see KeptForCases).
	Cases time.Duration
	// Quarantine applies to quarantine/.
	Quarantine time.Duration
	// Failed applies to the dead letters in failed/, by file modification time (they are not
	// partitioned by day).
	Failed time.Duration
	// MinFileAge protects recently published files (see above). Zero means one hour.
	MinFileAge time.Duration
	// Uploaded, when set, returns the names of the files of one partition (dataset, dt) that the
	// object store mirroring the root holds (ObjectStore.Uploaded). It is asked once per expired
	// partition that has a file to delete; a file it does not name is kept, and an error keeps
	// the whole partition. Nil: no object store, every expired file goes.
	Uploaded func(dataset, dt string) (map[string]bool, error)
}

// Expired is what retention removed from one partition (or, for failed/, the dead letters).
type Expired struct {
	Dataset   string
	Partition string // the dt value; empty for failed/
	Files     int
	Bytes     int64
	// Kept counts files of an expired partition left in place because they are younger than
	// MinFileAge; a later pass removes them.
	Kept int
	// NotUploaded counts files of an expired partition left in place because the object store
	// is not known to hold them (Retention.Uploaded); a pass after their upload removes them.
	NotUploaded int
	// KeptForCases counts steps/ files of an expired partition left in place because the
	// cases/ partition of the same day still holds a file (kept, not uploaded, or not
	// removable): a case row never outlives its steps rows. A pass after those go removes them.
	KeptForCases int
}

// Expire deletes, under root, the partitions and dead letters older than r allows at now, and
// returns what it removed. Errors on single files are joined and returned after the pass; the
// rest of the pass still runs.
func Expire(root string, r Retention, now time.Time) ([]Expired, error) {
	minAge := r.MinFileAge
	if minAge == 0 {
		minAge = time.Hour
	}
	var out []Expired
	var errs []error
	// cases/ before steps/: a day's steps files go only once its cases files are gone (see
	// expirePartitions), and a pass stopped between the two leaves steps rows, never a case
	// row without them.
	for _, ds := range []struct {
		name   string
		maxAge time.Duration
	}{{Cases, r.Cases}, {Steps, r.Cases}, {Quarantine, r.Quarantine}} {
		if ds.maxAge <= 0 {
			continue
		}
		got, err := expirePartitions(root, ds.name, ds.maxAge, minAge, r.Uploaded, now)
		out = append(out, got...)
		errs = append(errs, err)
	}
	if r.Failed > 0 {
		got, err := expireDeadLetters(root, r.Failed, now)
		if got.Files > 0 {
			out = append(out, got)
		}
		errs = append(errs, err)
	}
	return out, errors.Join(errs...)
}

// PartitionExpired reports whether partition dt (YYYY-MM-DD) is older than maxAge at now. A
// value that is not a date is never expired.
func PartitionExpired(dt string, maxAge time.Duration, now time.Time) bool {
	day, err := time.Parse(time.DateOnly, dt)
	if err != nil {
		return false
	}
	return !now.Before(day.Add(24 * time.Hour).Add(maxAge))
}

func expirePartitions(root, ds string, maxAge, minFileAge time.Duration, uploaded func(dataset, dt string) (map[string]bool, error), now time.Time) ([]Expired, error) {
	dir := filepath.Join(root, ds)
	parts, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Expired
	var errs []error
	for _, p := range parts {
		dt, ok := strings.CutPrefix(p.Name(), PartitionKey+"=")
		if !p.IsDir() || !ok || !PartitionExpired(dt, maxAge, now) {
			continue
		}
		e := Expired{Dataset: ds, Partition: dt}
		pdir := filepath.Join(dir, p.Name())
		files, err := os.ReadDir(pdir)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		// Steps files of a day whose cases/ still holds a file all stay: which case a steps file
		// belongs to is in its rows, not its name, and a steps row outliving its case is
		// harmless where the reverse is a case that cannot be replayed.
		casesLeft := ds == Steps && holdsDataFiles(filepath.Join(root, Cases, p.Name()))
		var inBucket map[string]bool // what the object store holds, asked at the first file to delete
		asked, askErr := false, error(nil)
		for _, f := range files {
			if f.IsDir() || !strings.HasSuffix(f.Name(), ".parquet") {
				continue // not ours: left alone, and the directory with it
			}
			if casesLeft {
				e.KeptForCases++
				continue
			}
			info, err := f.Info()
			if err != nil {
				continue // removed meanwhile (another collector expiring the same root)
			}
			if now.Sub(info.ModTime()) < minFileAge {
				e.Kept++
				continue
			}
			if uploaded != nil && !asked {
				asked = true
				if inBucket, askErr = uploaded(ds, dt); askErr != nil {
					errs = append(errs, fmt.Errorf("expiring %s: asking the object store which files it holds (none is deleted before it is uploaded): %w", filepath.Join(ds, p.Name()), askErr))
				}
			}
			if uploaded != nil && (askErr != nil || !inBucket[f.Name()]) {
				e.NotUploaded++
				continue
			}
			if err := os.Remove(filepath.Join(pdir, f.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, fmt.Errorf("expiring %s: %w", filepath.Join(ds, p.Name(), f.Name()), err))
				continue
			}
			e.Files++
			e.Bytes += info.Size()
		}
		if e.Kept == 0 && e.NotUploaded == 0 && e.KeptForCases == 0 {
			// Fails, harmlessly, when a file was published into it meanwhile: it stays for the
			// next pass.
			_ = os.Remove(pdir)
		}
		if e.Files > 0 || e.Kept > 0 || e.NotUploaded > 0 || e.KeptForCases > 0 {
			out = append(out, e)
		}
	}
	return out, errors.Join(errs...)
}

// holdsDataFiles reports whether the partition directory pdir holds a *.parquet file. A
// directory that cannot be read holds one, as far as retention knows.
func holdsDataFiles(pdir string) bool {
	files, err := os.ReadDir(pdir)
	if err != nil {
		return !errors.Is(err, fs.ErrNotExist)
	}
	for _, f := range files {
		if !f.IsDir() && strings.HasSuffix(f.Name(), ".parquet") {
			return true
		}
	}
	return false
}

func expireDeadLetters(root string, maxAge time.Duration, now time.Time) (Expired, error) {
	e := Expired{Dataset: Failed}
	dir := filepath.Join(root, Failed)
	files, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return e, nil
	}
	if err != nil {
		return e, err
	}
	var errs []error
	for _, f := range files {
		if f.IsDir() || !strings.HasSuffix(f.Name(), DeadLetterExt) {
			continue
		}
		info, err := f.Info()
		if err != nil || now.Sub(info.ModTime()) < maxAge {
			continue
		}
		if err := os.Remove(filepath.Join(dir, f.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("expiring %s: %w", filepath.Join(Failed, f.Name()), err))
			continue
		}
		e.Files++
		e.Bytes += info.Size()
	}
	return e, errors.Join(errs...)
}
