package replayext

import (
	"context"
	"os"
	"sync"
	"time"

	"github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/replaycase"
)

// openFiles keeps the data files read last open, their footers decoded: decoding the footer
// of a file with a few hundred columns allocates more than reading one of its rows, and reads
// of neighbouring cases (a listing, then its cases) hit the same file. It is bounded by count
// and by an estimate of what the open files hold, so that it does not raise the heap by more
// than a few MiB: one large file, or a few small ones.
type openFiles struct {
	// open opens a file whose reads run under ctx, a readContext (a local file ignores it).
	open func(ctx context.Context, path string) (*dataset.CaseFile, error)
	// version tells a file that was replaced under the same path from the one opened (a local
	// file's size and modification time); an error means the file is gone.
	version func(path string) (fileVersion, error)

	mu    sync.Mutex
	files []*openFile // least recently used first
	held  int64       // estimated bytes the open files hold
}

// fileVersion tells two files at one path apart.
type fileVersion struct {
	size  int64
	mtime time.Time
}

type openFile struct {
	path    string
	version fileVersion
	file    *dataset.CaseFile
	ctx     *readContext  // what the file's reads run under: the context of the read under way
	turn    chan struct{} // holds the read under way: reads of a file take turns, as its CaseFile's do
	users   int           // reads under way; the file is closed when it is evicted and has none
	evicted bool          // out of the list: closed by its last user
}

const (
	// maxOpenFiles bounds how many files stay open.
	maxOpenFiles = 4
	// maxOpenFooterBytes bounds the estimated memory of the open files: their decoded
	// footers and the offset indexes of the row groups read. The Go heap grows to twice what
	// is live before it is collected: each MiB held open costs two of the process's memory.
	maxOpenFooterBytes = 4 << 20
	// decodedFooterRatio is about how much more an open file holds than its encoded footer
	// (2.8 MiB, with the offset indexes of its ten row groups loaded by reads, for a 269 KiB
	// footer of 245 columns × 10 row groups, measured on the scale dataset of
	// docs/benchmarks.md): one such file stays open.
	decodedFooterRatio = 11
)

// readCase reads the case at row of file, through an open file, under ctx.
func (o *openFiles) readCase(ctx context.Context, path string, row int64) (*replaycase.Case, error) {
	return readOpen(ctx, o, path, func(f *dataset.CaseFile) (*replaycase.Case, error) { return f.ReadCase(row) })
}

// readSummaries reads the summaries of rows of file, through an open file, under ctx: a
// listing page and the reads of its cases that follow go to the same files.
func (o *openFiles) readSummaries(ctx context.Context, path string, rows []int64) (map[int64]*dataset.CaseSummary, error) {
	return readOpen(ctx, o, path, func(f *dataset.CaseFile) (map[int64]*dataset.CaseSummary, error) { return f.ReadSummaries(rows) })
}

// readOpen runs read on path's open file when its turn comes, with the file's reads under
// ctx; it gives up waiting for its turn when ctx ends.
func readOpen[T any](ctx context.Context, o *openFiles, path string, read func(*dataset.CaseFile) (T, error)) (T, error) {
	var zero T
	f, err := o.acquire(ctx, path)
	if err != nil {
		return zero, err
	}
	defer o.release(f)
	select {
	case f.turn <- struct{}{}:
	case <-ctx.Done():
		return zero, ctx.Err()
	}
	defer func() { <-f.turn }()
	defer f.ctx.serve(ctx)()
	return read(f.file)
}

// acquire returns path's open file, opening it under ctx if it is not open or has changed,
// and counts a user of it.
func (o *openFiles) acquire(ctx context.Context, path string) (*openFile, error) {
	v, err := o.version(path)
	if err != nil {
		o.forget(path)
		return nil, err
	}
	o.mu.Lock()
	for i, f := range o.files {
		if f.path != path {
			continue
		}
		if f.version == v {
			o.files = append(append(o.files[:i], o.files[i+1:]...), f) // most recent last, in place
			f.users++
			o.mu.Unlock()
			return f, nil
		}
		o.evict(i) // replaced under the same path
		break
	}
	o.makeRoom()
	o.mu.Unlock()
	rc := &readContext{}
	done := rc.serve(ctx)
	cf, err := o.open(rc, path) // without the lock: reads of other files go on
	done()
	if err != nil {
		return nil, err
	}
	f := &openFile{path: path, version: v, file: cf, ctx: rc, turn: make(chan struct{}, 1), users: 1}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.files = append(o.files, f)
	o.held += f.estimate()
	// Files opened meanwhile by other reads may have pushed over the bounds; a file alone
	// over them is read once and kept by none.
	o.evictOver(0, 0)
	return f, nil
}

// makeRoom closes the least recently used files that the file about to be opened would push
// over the bounds, before it is opened: else the file it replaces and its own footer, being
// decoded, are live at once, and the garbage collector sets its next target on both. The
// files of a dataset have footers alike, so the largest open one stands for the next. Caller
// holds mu.
func (o *openFiles) makeRoom() {
	var next int64
	for _, f := range o.files {
		next = max(next, f.estimate())
	}
	o.evictOver(1, next)
}

// evictOver closes the least recently used files until the open ones, with files more of
// bytes more, are within the bounds. Caller holds mu.
func (o *openFiles) evictOver(files int, bytes int64) {
	for len(o.files) > 0 && (len(o.files)+files > maxOpenFiles || o.held+bytes > maxOpenFooterBytes) {
		o.evict(0)
	}
}

// release ends a read of f, closing it if it was evicted meanwhile.
func (o *openFiles) release(f *openFile) {
	o.mu.Lock()
	defer o.mu.Unlock()
	f.users--
	if f.evicted && f.users == 0 {
		f.file.Close()
	}
}

// forget closes path's open file, if any: the file is gone.
func (o *openFiles) forget(path string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for i, f := range o.files {
		if f.path == path {
			o.evict(i)
			return
		}
	}
}

// close closes every open file; reads under way close theirs when they end.
func (o *openFiles) close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	for len(o.files) > 0 {
		o.evict(0)
	}
}

// evict takes files[i] out of the list, closing it unless a read is using it. Caller holds mu.
func (o *openFiles) evict(i int) {
	f := o.files[i]
	o.files = append(o.files[:i], o.files[i+1:]...)
	o.held -= f.estimate()
	f.evicted = true
	if f.users == 0 {
		f.file.Close()
	}
}

func (f *openFile) estimate() int64 { return decodedFooterRatio * f.file.FooterSize() }

// localVersion is a local file's size and modification time.
func localVersion(path string) (fileVersion, error) {
	info, err := os.Stat(path)
	if err != nil {
		return fileVersion{}, err
	}
	return fileVersion{info.Size(), info.ModTime()}, nil
}
