//go:build !unix

package dataset

import "os"

// lockFile fails: this system has no advisory file locks this package uses.
func lockFile(*os.File) error { return errNoFileLocks }
