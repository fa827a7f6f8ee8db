package dataset

import (
	"context"
	"fmt"
	"io/fs"
	"sort"
	"sync"

	"github.com/reprise-dev/reprise/replaycase"
)

// ObjectLister lists the data files of some datasets in the bucket incrementally, as Lister
// does for a local root: each Next returns only the files it has not returned before. Files are
// named by their s3://bucket/key location (File.Path), which the Read methods take. It is safe
// for concurrent use.
type ObjectLister struct {
	store    *ObjectStore
	datasets []string

	mu     sync.Mutex
	listed map[string]ObjectFile // by location, as of the last successful listing
	seen   map[string]bool       // locations Next has returned
}

// Close closes the idle connections of the lister's store (ObjectStore.Close).
func (l *ObjectLister) Close() { l.store.Close() }

// NewObjectLister lists the files of the given datasets (e.g. Cases, Quarantine) in the bucket.
func (s *ObjectStore) NewObjectLister(datasets ...string) *ObjectLister {
	return &ObjectLister{store: s, datasets: datasets, listed: map[string]ObjectFile{}, seen: map[string]bool{}}
}

// location is how an object is named: s3://bucket/key.
func (s *ObjectStore) location(key string) string { return "s3://" + s.bucket + "/" + key }

// Next lists the bucket and returns the files published since the last call (all of them on the
// first call), ordered by dataset, partition and name. A failed listing returns an error and
// keeps the previous listing, so that it never looks like every file was deleted.
func (l *ObjectLister) Next(ctx context.Context) ([]File, error) {
	listed := map[string]ObjectFile{}
	for _, ds := range l.datasets {
		files, err := l.store.List(ctx, ds)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			listed[l.store.location(f.Key)] = f
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.listed = listed
	var out []File
	for loc, f := range listed {
		if !l.seen[loc] {
			l.seen[loc] = true
			out = append(out, File{Dataset: f.Dataset, Partition: f.Partition, Path: loc})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// Retry makes the next Next return f again (for a file the caller could not read).
func (l *ObjectLister) Retry(f File) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.seen, f.Path)
}

// Removed reports whether the last listing no longer shows a file Next returned (retention or
// an operator deleted it). A deletion is seen at the listing after it, without a request per
// file.
func (l *ObjectLister) Removed(path string) bool {
	_, err := l.file(path)
	return err != nil
}

// file is the listed object at a location; an error wrapping fs.ErrNotExist when the last
// listing does not show it.
func (l *ObjectLister) file(path string) (ObjectFile, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f, ok := l.listed[path]
	if !ok {
		return f, fmt.Errorf("%s: %w", path, fs.ErrNotExist)
	}
	return f, nil
}

// ReadIndex reads the index entries of a listed cases/ or quarantine/ file (see ReadIndex).
func (l *ObjectLister) ReadIndex(ctx context.Context, path string) ([]IndexEntry, error) {
	f, err := l.file(path)
	if err != nil {
		return nil, err
	}
	return l.store.ReadObjectIndex(ctx, f)
}

// ReadCase reads one case row of a listed file (see ReadCase).
func (l *ObjectLister) ReadCase(ctx context.Context, path string, row int64) (*replaycase.Case, error) {
	df, err := l.open(ctx, path)
	if err != nil {
		return nil, err
	}
	return readRow(df, path, row)
}

// ReadRows reads several case rows of a listed file in one pass (see ReadRows).
func (l *ObjectLister) ReadRows(ctx context.Context, path string, rows []int64) (map[int64]*replaycase.Case, error) {
	df, err := l.open(ctx, path)
	if err != nil {
		return nil, err
	}
	return readRows(df, path, rows)
}

// ScanReadableCases scans the rows of a listed file from row `from` on, past the rows it
// cannot read (see ScanReadableCases).
func (l *ObjectLister) ScanReadableCases(ctx context.Context, path string, from int64, rowsPerRead int, fn func(row int64, c *CaseRow) error, lost func(from, to int64, err error)) error {
	df, err := l.open(ctx, path)
	if err != nil {
		return err
	}
	return scanCases(df, path, from, rowsPerRead, fn, lost)
}

// open opens a listed file for reading.
func (l *ObjectLister) open(ctx context.Context, path string) (dataFile, error) {
	f, err := l.file(path)
	if err != nil {
		return dataFile{}, err
	}
	return l.store.openObject(ctx, f)
}
