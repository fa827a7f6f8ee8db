package replayparquetreceiver

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/reprise-dev/reprise/dataset"
)

// files is where the receiver reads the dataset: a local root, or the bucket that the
// exporters of several hosts upload to.
type files interface {
	// next returns the files of the selected datasets published since the last call.
	next(ctx context.Context) ([]dataset.File, error)
	// scan calls fn for each row of a file from row `from` on, and lost for each range of rows
	// a corrupt page makes unreadable (dataset.ScanReadableCases).
	scan(ctx context.Context, f dataset.File, from int64, rowsPerRead int, fn func(row int64, c *dataset.CaseRow) error, lost func(from, to int64, err error)) error
	// close lets go of connections once reading has stopped.
	close()
}

type localFiles struct{ lister *dataset.Lister }

func (l localFiles) next(context.Context) ([]dataset.File, error) { return l.lister.Next() }

func (localFiles) close() {}

func (localFiles) scan(_ context.Context, f dataset.File, from int64, rowsPerRead int, fn func(row int64, c *dataset.CaseRow) error, lost func(from, to int64, err error)) error {
	return dataset.ScanReadableCases(f.Path, from, rowsPerRead, fn, lost)
}

type objectFiles struct{ lister *dataset.ObjectLister }

func (o objectFiles) next(ctx context.Context) ([]dataset.File, error) { return o.lister.Next(ctx) }

func (o objectFiles) close() { o.lister.Close() }

func (o objectFiles) scan(ctx context.Context, f dataset.File, from int64, rowsPerRead int, fn func(row int64, c *dataset.CaseRow) error, lost func(from, to int64, err error)) error {
	return o.lister.ScanReadableCases(ctx, f.Path, from, rowsPerRead, fn, lost)
}

// newFiles is the dataset cfg names: the bucket when object_store is set, else the directory.
// In once mode the directory must exist: a misspelled one would list no file, and the backlog
// would be done at once. Watch mode lists it until the exporter has created it.
func newFiles(ctx context.Context, cfg *Config) (files, error) {
	if !cfg.ObjectStore.HasValue() {
		switch info, err := os.Stat(cfg.Directory); {
		case err == nil && !info.IsDir():
			return nil, fmt.Errorf("directory: %s is not a directory (the dataset root the replay_parquet exporter writes)", cfg.Directory)
		case err == nil || cfg.Mode != ModeOnce:
		case errors.Is(err, fs.ErrNotExist):
			return nil, fmt.Errorf("directory: %s does not exist (the directory of the replay_parquet exporter; mode: once would read no file)", cfg.Directory)
		default:
			return nil, fmt.Errorf("directory: %w", err)
		}
		return localFiles{dataset.NewLister(cfg.Directory, cfg.Select.Datasets...)}, nil
	}
	st, err := dataset.NewObjectStore(ctx, *cfg.ObjectStore.Get())
	if err != nil {
		return nil, fmt.Errorf("object_store: %w", err)
	}
	return objectFiles{st.NewObjectLister(cfg.Select.Datasets...)}, nil
}

// location names the dataset read, for logs.
func (c *Config) location() string {
	if c.ObjectStore.HasValue() {
		return c.ObjectStore.Get().URL
	}
	return c.Directory
}
