package dataset

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"sync/atomic"

	"github.com/parquet-go/parquet-go"
)

// ErrUnreadable is wrapped by the error of opening a data file whose own bytes this build
// cannot read: not Parquet (no magic bytes, a truncated or corrupt footer), or a footer that
// names no schema version or one this build does not read; and by the error of reading rows
// of a file one of whose pages is corrupt (rowReader,
// scanReplayIndex). Reading the file again fails the same
// way, so a reader can set it aside. An error of reading the bytes (the disk, a
// permission, the network, a cancelled context) does not wrap it: a later read may succeed.
var ErrUnreadable = errors.New("not a data file this build reads")

// readErrors passes reads on and remembers whether one failed other than at the end of the
// bytes (io.EOF: the file is shorter than its footer says, an error of the bytes). The
// parquet.File keeps it as its reader, which may read from several goroutines.
type readErrors struct {
	io.ReaderAt
	failed atomic.Bool
	// headers checks the page headers in the bytes read once the footer is decoded (openFile):
	// a read that holds one claiming more than its column chunk holds fails (pageHeaders).
	headers *pageHeaders
}

func (r *readErrors) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		// parquet-go reads the 8 bytes at the end of a file shorter than 8 bytes there: an
		// error of the bytes, where the reader's (an invalid argument) would be a failed read.
		return 0, errShorterThanAFooter
	}
	n, err := r.ReaderAt.ReadAt(p, off)
	if err != nil && !errors.Is(err, io.EOF) {
		r.failed.Store(true)
	}
	if r.headers != nil && n > 0 {
		if err := r.headers.check(p[:n], off); err != nil {
			return 0, err
		}
	}
	return n, err
}

// offsetIndex loads the offset index of a column chunk (parquet-go's page readers of the chunk
// seek with it from then on) and tells the page header checks where its pages start: load it
// through here, before the chunk's pages are read.
func (r *readErrors) offsetIndex(chunk parquet.ColumnChunk) (parquet.OffsetIndex, error) {
	index, err := chunk.OffsetIndex()
	if err == nil && r.headers != nil {
		r.headers.offsetIndex(index)
	}
	return index, err
}

var errShorterThanAFooter = errors.New("the file is shorter than a Parquet footer's length and magic bytes (8 bytes)")

// ofBytes is err, an error of decoding what was read through r, wrapped in ErrUnreadable when
// it is an error of the bytes: no read through r failed, so reading them again decodes them the
// same way.
func (r *readErrors) ofBytes(err error) error {
	if err == nil || r.failed.Load() || errors.Is(err, ErrUnreadable) {
		return err // a page header refused (pageHeaders) wraps ErrUnreadable already
	}
	return fmt.Errorf("%w: %w", ErrUnreadable, err)
}

// rowsRead is the error of a read of row group g (-1: of every row of the file) whose pages
// ended after n rows, when its footer claims more: an error of the bytes, nil when the pages
// hold the rows claimed.
func (df dataFile) rowsRead(g int, n int64) error {
	what, claimed := "the file's pages", df.pf.NumRows()
	if g >= 0 {
		what, claimed = fmt.Sprintf("the pages of row group %d", g), df.pf.RowGroups()[g].NumRows()
	}
	if n >= claimed {
		return nil
	}
	return df.reads.ofBytes(fmt.Errorf("%s end after %d rows; the footer claims %d", what, n, claimed))
}

// missingRow is the error of a read of row that found no row there (err): when the footer
// claims the row, the pages end before it, an error of the bytes; otherwise err.
func (df dataFile) missingRow(row int64, err error) error {
	if row < 0 || row >= df.pf.NumRows() {
		return err
	}
	return df.reads.ofBytes(fmt.Errorf("the file's pages end before row %d; the footer claims %d rows", row, df.pf.NumRows()))
}

// dataFile is an open data file: its decoded footer, and the reader of its bytes, which tells
// an error of a page's bytes from a failed read (parquet-go keeps its reader to itself).
type dataFile struct {
	pf    *parquet.File
	reads *readErrors
}

// rowReader reads the rows of an open data file as T. Its errors of decoding a page (a header
// that does not decode, a checksum that does not match, bytes that do not decompress or
// values that do not decode) wrap ErrUnreadable, as an open's errors of the footer do.
type rowReader[T any] struct {
	*parquet.GenericReader[T]
	reads *readErrors
}

func newRowReader[T any](f dataFile) rowReader[T] {
	return rowReader[T]{parquet.NewGenericReader[T](f.pf), f.reads}
}

// newRowGroupReader reads the rows of row group g alone (its first row is row 0).
func newRowGroupReader[T any](f dataFile, g int) rowReader[T] {
	return rowReader[T]{parquet.NewGenericRowGroupReader[T](f.pf.RowGroups()[g]), f.reads}
}

func (r rowReader[T]) Read(rows []T) (n int, err error) {
	defer r.settle(&err)
	return r.GenericReader.Read(rows)
}

func (r rowReader[T]) SeekToRow(row int64) (err error) {
	defer r.settle(&err)
	return r.GenericReader.SeekToRow(row)
}

// Close lets go of the reader; a reader a panic left halfway may panic again here.
func (r rowReader[T]) Close() (err error) {
	defer r.settle(&err)
	return r.GenericReader.Close()
}

// settle, deferred by each call into the reader, recovers its panic (recoverDecode) and gives
// the error rowsError makes of it.
func (r rowReader[T]) settle(err *error) {
	if p := recover(); p != nil {
		*err = decodePanic(p)
	}
	*err = r.rowsError(*err)
}

// recoverDecode turns a panic of parquet-go while it decodes a file's bytes into *err: on some
// malformed bytes it panics (an index out of range, a negative length, a nil pointer) instead
// of returning an error, and a panic would stop the collector. The callers wrap the error in
// ErrUnreadable (readErrors.ofBytes), so that the file is set aside as any other file whose
// bytes do not decode. Deferred by every call into parquet-go that decodes a file's bytes, and
// by none that runs a caller's code (a scan's fn), whose panics are the caller's.
func recoverDecode(err *error) {
	if p := recover(); p != nil {
		*err = decodePanic(p)
	}
}

// decodePanic is the error of parquet-go's panic p (recoverDecode).
func decodePanic(p any) error { return fmt.Errorf("parquet-go panicked decoding the file: %v", p) }

// guarded runs read, a decoding of the file's bytes, with its panics recovered and its errors
// of the bytes wrapped in ErrUnreadable.
func (r *readErrors) guarded(read func() error) (err error) {
	defer func() { err = r.ofBytes(err) }()
	defer recoverDecode(&err)
	return read()
}

// rowsError passes io.EOF (no more rows) on as it is: its callers stop at it.
func (r rowReader[T]) rowsError(err error) error {
	if errors.Is(err, io.EOF) {
		return err
	}
	return r.reads.ofBytes(err)
}

// pageEnd is the row of the file after the page that makes row bad of the scan's row group
// unreadable: in the first column whose page holding bad does not decode, or whose next page
// does not when bad is the last row of its page (a row reader reads on into the next page to
// see that the row ended), the first row of the page after it. The rows between bad and there
// are in the same pages of that column, and fail as bad did; a page of another column that
// fails too is found by the scan's next read. It is the row group's end when no page is found
// to fail (a column without an offset index is not looked into). Its error is a failed read
// (not of the bytes).
func (s rowGroupScan) pageEnd(bad int64) (int64, error) {
	bad -= s.first
	for _, chunk := range s.df.pf.RowGroups()[s.g].ColumnChunks() {
		index, err := s.df.reads.offsetIndex(chunk)
		if err != nil {
			continue
		}
		p := sort.Search(index.NumPages(), func(i int) bool { return index.FirstRowIndex(i) > bad }) - 1
		for ; p >= 0 && p < index.NumPages() && index.FirstRowIndex(p) <= bad+1; p++ {
			failed, err := pageFails(s.df, chunk, index.FirstRowIndex(p))
			if err != nil {
				return 0, err
			}
			if failed {
				if p+1 < index.NumPages() {
					return s.first + index.FirstRowIndex(p+1), nil
				}
				return s.end, nil
			}
		}
	}
	return s.end, nil
}

// pageFails reports whether the page of a column chunk that starts at row (of its row group)
// does not decode; its error is a failed read.
func pageFails(df dataFile, chunk parquet.ColumnChunk, row int64) (bool, error) {
	err := df.reads.guarded(func() error {
		pages := chunk.Pages()
		defer pages.Close()
		if err := pages.SeekToRow(row); err != nil {
			return err
		}
		page, err := pages.ReadPage()
		if err == nil {
			parquet.Release(page)
		}
		return err
	})
	if errors.Is(err, ErrUnreadable) {
		return true, nil
	}
	return false, err
}
