//go:build !unix

package dataset

import (
	"errors"
	"os"
)

// errNoFileLocks says the system has no advisory file locks this package uses: segments then
// keep the age rule alone.
var errNoFileLocks = errors.New("file locks are not supported here")

func lockFile(*os.File) error { return errNoFileLocks }
