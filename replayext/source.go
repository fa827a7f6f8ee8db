package replayext

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/replaycase"
)

// source is where the dataset's files are: a local root, or a bucket the exporters of several
// hosts upload to. Files are named by a string the source alone interprets (a path, or an
// s3:// location). Calls that take a context end with it: a bucket that stops answering must
// not hold a refresh, a request or the extension's shutdown.
type source interface {
	// next returns the cases/ and quarantine/ files published since the last call.
	next(ctx context.Context) ([]string, error)
	// retry makes the next call of next return file again (it could not be read).
	retry(file string)
	// removed reports whether file is known to be gone (retention deleted its partition).
	removed(file string) bool
	// scanIndex calls fn with each row's index projection, in file order (see
	// dataset.ScanReplayIndex).
	scanIndex(ctx context.Context, file string, fn func(row int64, r *dataset.ReplayIndexRow) error) error
	// readCase reads one case; an error wrapping fs.ErrNotExist when its file is gone.
	readCase(ctx context.Context, file string, row int64) (*replaycase.Case, error)
	readSummaries(ctx context.Context, file string, rows []int64) (map[int64]*dataset.CaseSummary, error)
	// close lets go of connections once the extension has stopped, and ends the reads still
	// under way.
	close()
}

// localSource reads a dataset root on the local file system.
type localSource struct {
	lister *dataset.Lister
	files  *openFiles
}

func newLocalSource(root string) *localSource {
	return &localSource{
		lister: dataset.NewLister(root, dataset.Cases, dataset.Quarantine),
		files:  &openFiles{open: openLocal, version: localVersion},
	}
}

// openLocal opens a local file; its reads wait on no network, so they need no context.
func openLocal(_ context.Context, path string) (*dataset.CaseFile, error) {
	return dataset.OpenCaseFile(path)
}

func (l *localSource) next(context.Context) ([]string, error) { return filePaths(l.lister.Next()) }

func (l *localSource) retry(file string) { l.lister.Retry(dataset.File{Path: file}) }

func (l *localSource) removed(file string) bool {
	_, err := os.Stat(file)
	if errors.Is(err, fs.ErrNotExist) {
		l.files.forget(file)
		return true
	}
	return false
}

func (l *localSource) scanIndex(_ context.Context, file string, fn func(row int64, r *dataset.ReplayIndexRow) error) error {
	return dataset.ScanReplayIndex(file, fn)
}

func (l *localSource) readCase(ctx context.Context, file string, row int64) (*replaycase.Case, error) {
	return l.files.readCase(ctx, file, row)
}

func (l *localSource) readSummaries(ctx context.Context, file string, rows []int64) (map[int64]*dataset.CaseSummary, error) {
	return l.files.readSummaries(ctx, file, rows)
}

// objectSource reads a dataset in an S3 bucket. Each next lists the cases/ and quarantine/
// keys; a key that a listing no longer shows is removed (a deletion is seen one refresh after
// it happens, without a request per file).
type objectSource struct {
	lister *dataset.ObjectLister
	files  *openFiles
	// readTimeout bounds a read of a case or of a page of summaries. The store's HTTP client
	// has no timeout, so a server that accepts a connection and never answers would hold the
	// request for ever. Listings and index scans are bounded by the refresh's deadline
	// instead: their size grows with the bucket.
	readTimeout time.Duration
	// closed ends at close: the calls still under way end with it.
	closed   context.Context
	endCalls context.CancelFunc
}

// objectReadTimeout is objectSource.readTimeout: a read is a few ranged GETs of pages, each
// well under a second on a working store.
const objectReadTimeout = 30 * time.Second

func newObjectSource(ctx context.Context, cfg dataset.ObjectStoreConfig) (*objectSource, error) {
	st, err := dataset.NewObjectStore(ctx, cfg)
	if err != nil {
		return nil, err
	}
	o := &objectSource{lister: st.NewObjectLister(dataset.Cases, dataset.Quarantine), readTimeout: objectReadTimeout}
	o.closed, o.endCalls = context.WithCancel(context.Background())
	o.files = &openFiles{
		open: o.lister.OpenCaseFile,
		// Published objects are never rewritten under their name (they are named by a
		// UUID); a removed one is forgotten when the listing no longer shows it.
		version: func(string) (fileVersion, error) { return fileVersion{}, nil },
	}
	return o, nil
}

func (o *objectSource) close() {
	o.endCalls()
	o.files.close()
	o.lister.Close()
}

// call runs one call to the bucket under ctx until close, and within timeout when it is not
// 0. An error of a call cut short wraps the context's error, whatever the layers below made
// of it.
func call[T any](ctx context.Context, o *objectSource, timeout time.Duration, fn func(context.Context) (T, error)) (T, error) {
	var cancel context.CancelFunc
	if timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, timeout)
	} else {
		ctx, cancel = context.WithCancel(ctx)
	}
	defer cancel()
	defer context.AfterFunc(o.closed, cancel)()
	v, err := fn(ctx)
	if cerr := ctx.Err(); err != nil && cerr != nil && !errors.Is(err, cerr) {
		err = fmt.Errorf("%w: %w", cerr, err)
	}
	return v, err
}

func (o *objectSource) next(ctx context.Context) ([]string, error) {
	return call(ctx, o, 0, func(ctx context.Context) ([]string, error) { return filePaths(o.lister.Next(ctx)) })
}

func (o *objectSource) retry(file string) { o.lister.Retry(dataset.File{Path: file}) }

func (o *objectSource) removed(file string) bool {
	if o.lister.Removed(file) {
		o.files.forget(file)
		return true
	}
	return false
}

func (o *objectSource) scanIndex(ctx context.Context, file string, fn func(row int64, r *dataset.ReplayIndexRow) error) error {
	_, err := call(ctx, o, 0, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, o.lister.ScanReplayIndex(ctx, file, fn)
	})
	return err
}

func (o *objectSource) readCase(ctx context.Context, file string, row int64) (*replaycase.Case, error) {
	return call(ctx, o, o.readTimeout, func(ctx context.Context) (*replaycase.Case, error) { return o.files.readCase(ctx, file, row) })
}

func (o *objectSource) readSummaries(ctx context.Context, file string, rows []int64) (map[int64]*dataset.CaseSummary, error) {
	return call(ctx, o, o.readTimeout, func(ctx context.Context) (map[int64]*dataset.CaseSummary, error) {
		return o.files.readSummaries(ctx, file, rows)
	})
}

// filePaths are the paths of listed files.
func filePaths(files []dataset.File, err error) ([]string, error) {
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = f.Path
	}
	return out, err
}

func (l *localSource) close() { l.files.close() }
