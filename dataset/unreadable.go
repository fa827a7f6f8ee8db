package dataset

import (
	"errors"
	"io"
	"sync/atomic"
)

// ErrUnreadable is wrapped by the error of opening a data file whose own bytes this build
// cannot read: not Parquet (no magic bytes, a truncated or corrupt footer), or a footer that
// names no schema version or one this build does not read. Reading the file again fails the
// same way, so a reader can set it aside. An error of reading the bytes (the disk, a
// permission, the network, a cancelled context) does not wrap it: a later read may succeed.
var ErrUnreadable = errors.New("not a data file this build reads")

// readErrors passes reads on and remembers whether one failed other than at the end of the
// bytes (io.EOF: the file is shorter than its footer says, an error of the bytes). The
// parquet.File keeps it as its reader, which may read from several goroutines.
type readErrors struct {
	io.ReaderAt
	failed atomic.Bool
}

func (r *readErrors) ReadAt(p []byte, off int64) (int, error) {
	n, err := r.ReaderAt.ReadAt(p, off)
	if err != nil && !errors.Is(err, io.EOF) {
		r.failed.Store(true)
	}
	return n, err
}
