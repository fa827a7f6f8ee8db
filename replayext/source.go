package replayext

import (
	"context"
	"errors"
	"io/fs"
	"os"

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
	// scanIndex calls fn with each row's index projection, in file order (see
	// dataset.ScanReplayIndex).
	scanIndex(file string, fn func(row int64, r *dataset.ReplayIndexRow) error) error
	readCase(file string, row int64) (*replaycase.Case, error)
	readSummaries(file string, rows []int64) (map[int64]*dataset.CaseSummary, error)
	// close lets go of connections once the extension has stopped.
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
		files:  &openFiles{open: dataset.OpenCaseFile, version: localVersion},
	}
}

func (l *localSource) next() ([]string, error) { return filePaths(l.lister.Next()) }

func (l *localSource) retry(file string) { l.lister.Retry(dataset.File{Path: file}) }

func (l *localSource) removed(file string) bool {
	_, err := os.Stat(file)
	if errors.Is(err, fs.ErrNotExist) {
		l.files.forget(file)
		return true
	}
	return false
}

func (l *localSource) scanIndex(file string, fn func(row int64, r *dataset.ReplayIndexRow) error) error {
	return dataset.ScanReplayIndex(file, fn)
}

func (l *localSource) readCase(file string, row int64) (*replaycase.Case, error) {
	return l.files.readCase(file, row)
}

func (l *localSource) readSummaries(file string, rows []int64) (map[int64]*dataset.CaseSummary, error) {
	return l.files.readSummaries(file, rows)
}

// objectSource reads a dataset in an S3 bucket. Each next lists the cases/ and quarantine/
// keys; a key that a listing no longer shows is removed (a deletion is seen one refresh after
// it happens, without a request per file).
type objectSource struct {
	lister *dataset.ObjectLister
	files  *openFiles
}

func newObjectSource(ctx context.Context, cfg dataset.ObjectStoreConfig) (*objectSource, error) {
	st, err := dataset.NewObjectStore(ctx, cfg)
	if err != nil {
		return nil, err
	}
	o := &objectSource{lister: st.NewObjectLister(dataset.Cases, dataset.Quarantine)}
	o.files = &openFiles{
		open: func(path string) (*dataset.CaseFile, error) {
			return o.lister.OpenCaseFile(context.Background(), path)
		},
		// Published objects are never rewritten under their name (they are named by a
		// UUID); a removed one is forgotten when the listing no longer shows it.
		version: func(string) (fileVersion, error) { return fileVersion{}, nil },
	}
	return o, nil
}

func (o *objectSource) close() {
	o.files.close()
	o.lister.Close()
}

func (o *objectSource) next() ([]string, error) {
	return filePaths(o.lister.Next(context.Background()))
}

func (o *objectSource) retry(file string) { o.lister.Retry(dataset.File{Path: file}) }

func (o *objectSource) removed(file string) bool {
	if o.lister.Removed(file) {
		o.files.forget(file)
		return true
	}
	return false
}

func (o *objectSource) scanIndex(file string, fn func(row int64, r *dataset.ReplayIndexRow) error) error {
	return o.lister.ScanReplayIndex(context.Background(), file, fn)
}

func (o *objectSource) readCase(file string, row int64) (*replaycase.Case, error) {
	return o.files.readCase(file, row)
}

func (o *objectSource) readSummaries(file string, rows []int64) (map[int64]*dataset.CaseSummary, error) {
	return o.files.readSummaries(file, rows)
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
