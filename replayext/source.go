package replayext

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"sync"

	"github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/replaycase"
)

// source is where the dataset's files are: a local root, or a bucket the exporters of several
// hosts upload to. Files are named by a string the source alone interprets (a path, or an
// s3:// location).
type source interface {
	// next returns the cases/ and quarantine/ files published since the last call.
	next() ([]string, error)
	// retry makes the next call of next return file again (it could not be read).
	retry(file string)
	// removed reports whether file is known to be gone (retention deleted its partition).
	removed(file string) bool
	readIndex(file string) ([]dataset.IndexEntry, error)
	readCase(file string, row int64) (*replaycase.Case, error)
	readRows(file string, rows []int64) (map[int64]*replaycase.Case, error)
}

// localSource reads a dataset root on the local file system.
type localSource struct{ lister *dataset.Lister }

func newLocalSource(root string) *localSource {
	return &localSource{lister: dataset.NewLister(root, dataset.Cases, dataset.Quarantine)}
}

func (l *localSource) next() ([]string, error) {
	files, err := l.lister.Next()
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = f.Path
	}
	return out, err
}

func (l *localSource) retry(file string) { l.lister.Retry(dataset.File{Path: file}) }

func (l *localSource) removed(file string) bool {
	_, err := os.Stat(file)
	return errors.Is(err, fs.ErrNotExist)
}

func (l *localSource) readIndex(file string) ([]dataset.IndexEntry, error) {
	return dataset.ReadIndex(file)
}

func (l *localSource) readCase(file string, row int64) (*replaycase.Case, error) {
	return dataset.ReadCase(file, row)
}

func (l *localSource) readRows(file string, rows []int64) (map[int64]*replaycase.Case, error) {
	return dataset.ReadRows(file, rows)
}

// objectSource reads a dataset in an S3 bucket. Each next lists the cases/ and quarantine/
// keys; a key that a listing no longer shows is removed (so a deletion is seen one refresh
// after it happens, without a request per file).
type objectSource struct {
	store  *dataset.ObjectStore
	bucket string // to name files

	mu     sync.Mutex
	listed map[string]dataset.ObjectFile // by name, as of the last listing
	seen   map[string]bool               // names next has returned
}

func newObjectSource(ctx context.Context, cfg dataset.ObjectStoreConfig) (*objectSource, error) {
	st, err := dataset.NewObjectStore(ctx, cfg)
	if err != nil {
		return nil, err
	}
	bucket, _, _ := dataset.ParseS3URL(cfg.URL) // valid: NewObjectStore checked it
	return &objectSource{store: st, bucket: bucket, listed: map[string]dataset.ObjectFile{}, seen: map[string]bool{}}, nil
}

// name is how the index and the logs name an object: its full s3:// location.
func (o *objectSource) name(f dataset.ObjectFile) string {
	return "s3://" + o.bucket + "/" + f.Key
}

func (o *objectSource) next() ([]string, error) {
	listed := map[string]dataset.ObjectFile{}
	for _, ds := range []string{dataset.Cases, dataset.Quarantine} {
		files, err := o.store.List(context.Background(), ds)
		if err != nil {
			return nil, err // keep the last listing: a failed list must not look like deletions
		}
		for _, f := range files {
			listed[o.name(f)] = f
		}
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.listed = listed
	var out []string
	for n := range listed {
		if !o.seen[n] {
			o.seen[n] = true
			out = append(out, n)
		}
	}
	slices.Sort(out) // by dataset, partition and name, as the local lister orders them
	return out, nil
}

func (o *objectSource) retry(file string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.seen, file)
}

func (o *objectSource) removed(file string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	_, ok := o.listed[file]
	return !ok
}

func (o *objectSource) file(name string) (dataset.ObjectFile, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	f, ok := o.listed[name]
	if !ok {
		return f, fmt.Errorf("%s: no longer in the bucket", name)
	}
	return f, nil
}

func (o *objectSource) readIndex(file string) ([]dataset.IndexEntry, error) {
	f, err := o.file(file)
	if err != nil {
		return nil, err
	}
	return o.store.ReadObjectIndex(context.Background(), f)
}

func (o *objectSource) readCase(file string, row int64) (*replaycase.Case, error) {
	f, err := o.file(file)
	if err != nil {
		return nil, err
	}
	return o.store.ReadObjectCase(context.Background(), f, row)
}

func (o *objectSource) readRows(file string, rows []int64) (map[int64]*replaycase.Case, error) {
	f, err := o.file(file)
	if err != nil {
		return nil, err
	}
	return o.store.ReadObjectRows(context.Background(), f, rows)
}
