package dataset

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"

	"github.com/parquet-go/parquet-go"

	"github.com/reprise-dev/reprise/replaycase"
)

// ReadRows reads several rows of one cases/ or quarantine/ file in one pass: the file and its
// footer are opened once, and rows that follow each other are read without seeking. A listing
// page reads its cases this way; ReadCase, one row per open, serves single lookups. Raw spans
// and events are left out: whoever serves cases does not serve them.
func ReadRows(path string, rows []int64) (map[int64]*replaycase.Case, error) {
	f, df, err := open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readRows(df, path, rows)
}

// readRows reads rows of an open cases/ or quarantine/ file; path names it in errors.
func readRows(df dataFile, path string, rows []int64) (map[int64]*replaycase.Case, error) {
	out, err := readRowsOf[CaseRow](df, path, rows)
	fillSpanIDsOf(df.pf, out)
	for _, c := range out {
		c.RawSpans, c.RawEvents = nil, nil
	}
	return out, err
}

// readRowsOf reads rows of an open file as T, whose columns may be a projection of the file's.
func readRowsOf[T any](df dataFile, path string, rows []int64) (map[int64]*T, error) {
	r := newRowReader[T](df)
	defer r.Close()
	rows = slices.Clone(rows)
	slices.Sort(rows)
	out := make(map[int64]*T, len(rows))
	next := int64(-1) // the row the reader is at
	buf := make([]T, 1)
	for _, row := range slices.Compact(rows) {
		if row != next {
			if err := r.SeekToRow(row); err != nil {
				if errors.Is(err, io.EOF) {
					err = df.missingRow(row, err)
				}
				return nil, fmt.Errorf("%s: row %d: %w", path, row, err)
			}
		}
		if n, err := r.Read(buf); n != 1 {
			if err == nil || errors.Is(err, io.EOF) {
				err = df.missingRow(row, fmt.Errorf("the file has %d rows", df.pf.NumRows()))
			}
			return nil, fmt.Errorf("%s: row %d: %w", path, row, err)
		}
		c := buf[0]
		zeroTimesBackOf(&c)
		out[row] = &c
		var zero T
		buf[0] = zero
		next = row + 1
	}
	return out, nil
}

// CaseFile is an open cases/ or quarantine/ file whose footer is decoded once, for a server
// that reads single rows of the same files again and again: decoding the footer of a file
// with a few hundred columns allocates megabytes, more than reading the row. A read takes the
// row's values from the one page of each column that holds them, found through the column
// chunk's offset index, into buffers the next read reuses (see rowPages). A CaseFile is safe
// for concurrent use; its reads take turns.
type CaseFile struct {
	path  string
	reads *readErrors // tells an error of the file's bytes (ErrUnreadable) from a failed read
	in    io.Closer   // nil when the file's reader needs no closing (an object in a bucket)
	rows  int64
	// footer is the size of the file's encoded footer: a cache of open files bounds by it.
	footer int64
	// idsOnce: the file stores each span id once, so a read puts the copies back.
	idsOnce bool

	mu        sync.Mutex
	pages     *rowPages[CaseRow]
	summaries *rowPages[CaseSummary] // made by the first ReadSummaries
	closed    bool
}

// OpenCaseFile opens a local cases/ or quarantine/ file for reads of single rows. It does not
// read the page index with the footer: a read loads the offset index of the column chunks of
// its row group only, and the page index of the whole file is a third of what an open file
// would hold.
func OpenCaseFile(path string) (*CaseFile, error) {
	f, df, err := open(path, parquet.SkipPageIndex(true))
	if err != nil {
		return nil, err
	}
	c, err := newCaseFile(path, df)
	if err != nil {
		f.Close()
		return nil, err
	}
	c.in = f
	return c, nil
}

// OpenCaseFile opens a listed file for reads of single rows (see OpenCaseFile).
func (l *ObjectLister) OpenCaseFile(ctx context.Context, path string) (*CaseFile, error) {
	df, err := l.open(ctx, path)
	if err != nil {
		return nil, err
	}
	return newCaseFile(path, df)
}

func newCaseFile(path string, df dataFile) (*CaseFile, error) {
	pf := df.pf
	var tail [8]byte // the footer's length, then "PAR1"
	if _, err := pf.ReadAt(tail[:], pf.Size()-8); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var pages *rowPages[CaseRow]
	err := df.reads.guarded(func() (err error) {
		pages, err = newRowPages[CaseRow](df, leftOutOfCases)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &CaseFile{
		path: path, reads: df.reads, rows: pf.NumRows(), footer: int64(binary.LittleEndian.Uint32(tail[:4])), idsOnce: storesSpanIDsOnce(pf),
		pages: pages,
	}, nil
}

// FooterSize is the size of the file's encoded footer in bytes: what holding the file open
// costs grows with it.
func (c *CaseFile) FooterSize() int64 { return c.footer }

// Close lets go of the file.
func (c *CaseFile) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	c.pages, c.summaries = nil, nil
	if c.in == nil {
		return nil
	}
	return c.in.Close()
}

// ReadCase reads the case at row (IndexEntry.Row), without its raw spans and events.
func (c *CaseFile) ReadCase(row int64) (*replaycase.Case, error) {
	if row < 0 || row >= c.rows {
		return nil, fmt.Errorf("%s: row %d out of range (the file has %d rows)", c.path, row, c.rows)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, fmt.Errorf("%s: %w", c.path, os.ErrClosed)
	}
	out := new(CaseRow)
	if err := c.reads.guarded(func() error { return c.pages.read(row, out) }); err != nil {
		return nil, fmt.Errorf("%s: reading row %d: %w", c.path, row, err)
	}
	out.RawSpans, out.RawEvents = nil, nil // left unread
	if c.idsOnce {
		fillSpanIDs(out)
	}
	return out, nil
}

// ReadSummaries reads the summaries of several rows, by row, reading each summary column's
// pages once for all of them (see rowPages.readRows).
func (c *CaseFile) ReadSummaries(rows []int64) (map[int64]*CaseSummary, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, fmt.Errorf("%s: %w", c.path, os.ErrClosed)
	}
	var out map[int64]*CaseSummary
	err := c.reads.guarded(func() (err error) {
		if c.summaries == nil {
			if c.summaries, err = newRowPages[CaseSummary](dataFile{c.pages.pf, c.reads}, nil); err != nil {
				return err
			}
		}
		out, err = c.summaries.readRows(rows)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.path, err)
	}
	return markMutations(out, nil)
}
