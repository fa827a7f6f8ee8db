//go:build unix

package dataset

import (
	"os"
	"syscall"
)

// lockFile takes an exclusive lock on f without waiting; it fails while another open file
// description, in this process or another, holds one.
func lockFile(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
}
