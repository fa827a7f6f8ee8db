// Package faults injects filesystem failures into a dataset writer.
package faults

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/reprise-dev/reprise/dataset"
)

// DiskFull makes every staged data file of the given datasets (all when none is given) fail
// with ENOSPC once it holds more than afterBytes bytes, as a full disk does.
func DiskFull(afterBytes int, datasets ...string) dataset.Option {
	return dataset.WithCreateFile(func(path string) (dataset.StagedFile, error) {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err != nil {
			return nil, err
		}
		if len(datasets) == 0 {
			return &fullDisk{File: f, limit: afterBytes}, nil
		}
		for _, d := range datasets {
			if strings.HasPrefix(filepath.Base(path), d+"-") {
				return &fullDisk{File: f, limit: afterBytes}, nil
			}
		}
		return f, nil
	})
}

type fullDisk struct {
	*os.File
	limit, written int
}

func (f *fullDisk) Write(p []byte) (int, error) {
	if f.written+len(p) > f.limit {
		return 0, &os.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
	}
	f.written += len(p)
	return f.File.Write(p)
}
