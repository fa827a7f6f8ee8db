package dataset

import (
	"errors"
	"io"
	"sync"
)

// Page buffers: where parquet-go's column writers keep a column chunk's finished (compressed)
// pages until the row group is written out.
//
// parquet-go's own pool (parquet.NewBufferPool) gives every column a buffer of 32 KiB chunks
// from a sync.Pool. A row of cases/ has 245 columns, most of them nearly empty in a segment,
// so each segment file took ~7.7 MiB of chunks; under load the garbage collector runs several
// times a second and empties the sync.Pool, so nearly every segment and merge allocated them
// afresh (half of the page-chunk allocation in a paced run's heap profile). A pageBuffer's
// chunks start at 1 KiB and double up to 64 KiB, so a nearly empty column takes 1 KiB and a
// large one is never copied to grow; the pool keeps chunks across files, up to a bound.

// pagePool is the one pool every dataset writer of the process shares (segments, merges,
// direct files, case files); a BufferPool must be safe for concurrent use, and this one is.
var pagePool = &pageBufferPool{}

const (
	firstPageChunk = 1 << 10
	// pageChunkClasses: chunk sizes 1, 2, 4, … 64 KiB; every chunk after the seventh is 64 KiB.
	pageChunkClasses = 7
	// keptPageChunkBytes bounds the chunks the pool keeps while no writer uses them: about
	// what one segment's and one merge's columns hold at once in scripts/bench-pipeline.sh.
	keptPageChunkBytes = 4 << 20
)

// pageChunkClass is the size class of chunk i of a buffer, and pageChunkStart its offset in
// the buffer: chunk i holds bytes [pageChunkStart(i), pageChunkStart(i)+pageChunkSize(i)).
func pageChunkClass(i int) int { return min(i, pageChunkClasses-1) }
func pageChunkSize(i int) int  { return firstPageChunk << pageChunkClass(i) }
func pageChunkStart(i int) int {
	if i < pageChunkClasses {
		return firstPageChunk * (1<<i - 1)
	}
	return pageChunkStart(pageChunkClasses-1) + (i-pageChunkClasses+1)*pageChunkSize(pageChunkClasses-1)
}

// pageChunkAt returns the chunk holding offset off and off's position in it.
func pageChunkAt(off int) (chunk, at int) {
	last := pageChunkClasses - 1
	if off < pageChunkStart(last) {
		for chunk = 0; off >= pageChunkStart(chunk+1); chunk++ {
		}
		return chunk, off - pageChunkStart(chunk)
	}
	size := pageChunkSize(last)
	rest := off - pageChunkStart(last)
	return last + rest/size, rest % size
}

// pageBufferPool implements parquet.BufferPool; it keeps freed chunks by size class.
type pageBufferPool struct {
	mu   sync.Mutex
	free [pageChunkClasses][][]byte
	kept int // bytes of the chunks in free
}

func (p *pageBufferPool) GetBuffer() io.ReadWriteSeeker { return &pageBuffer{pool: p} }

// PutBuffer takes back a buffer parquet-go no longer uses and keeps its chunks within the
// bound.
func (p *pageBufferPool) PutBuffer(rw io.ReadWriteSeeker) {
	b, ok := rw.(*pageBuffer)
	if !ok || b.pool != p {
		return
	}
	p.mu.Lock()
	for i, c := range b.chunks {
		if p.kept+len(c) > keptPageChunkBytes {
			break
		}
		class := pageChunkClass(i)
		p.free[class] = append(p.free[class], c)
		p.kept += len(c)
	}
	p.mu.Unlock()
	*b = pageBuffer{pool: p}
}

// chunk returns a chunk for position i of a buffer, a kept one when there is one.
func (p *pageBufferPool) chunk(i int) []byte {
	class := pageChunkClass(i)
	p.mu.Lock()
	if n := len(p.free[class]); n > 0 {
		c := p.free[class][n-1]
		p.free[class][n-1] = nil
		p.free[class] = p.free[class][:n-1]
		p.kept -= len(c)
		p.mu.Unlock()
		return c
	}
	p.mu.Unlock()
	return make([]byte, pageChunkSize(i))
}

// pageBuffer is an in-memory io.ReadWriteSeeker over chunks of growing size. parquet-go
// writes a column's pages to it in order, then seeks to the start and copies them out.
// Every chunk is full length; size says how many bytes the buffer holds.
type pageBuffer struct {
	pool   *pageBufferPool
	chunks [][]byte
	size   int
	off    int
}

var errNegativeOffset = errors.New("page buffer: negative offset")

func (b *pageBuffer) Write(p []byte) (int, error) {
	if b.off > b.size { // after a seek past the end: zeros in between, as in a file
		gap := b.off - b.size
		b.off = b.size
		b.write(make([]byte, gap))
	}
	b.write(p)
	return len(p), nil
}

// write copies p at off, which is at most size, adding chunks as it needs them.
func (b *pageBuffer) write(p []byte) {
	for len(p) > 0 {
		i, at := pageChunkAt(b.off)
		if i == len(b.chunks) {
			b.chunks = append(b.chunks, b.pool.chunk(i))
		}
		n := copy(b.chunks[i][at:], p)
		p = p[n:]
		b.off += n
	}
	b.size = max(b.size, b.off)
}

func (b *pageBuffer) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if b.off >= b.size {
		return 0, io.EOF
	}
	i, at := pageChunkAt(b.off)
	n := copy(p, b.chunks[i][at:min(len(b.chunks[i]), at+b.size-b.off)])
	b.off += n
	return n, nil
}

// WriteTo lets io.Copy hand the pages to the file chunk by chunk, without a copy of its own.
func (b *pageBuffer) WriteTo(w io.Writer) (int64, error) {
	var written int64
	for b.off < b.size {
		i, at := pageChunkAt(b.off)
		n, err := w.Write(b.chunks[i][at:min(len(b.chunks[i]), at+b.size-b.off)])
		b.off += n
		written += int64(n)
		if err != nil {
			return written, err
		}
	}
	return written, nil
}

func (b *pageBuffer) Seek(offset int64, whence int) (int64, error) {
	var base int64
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		base = int64(b.off)
	case io.SeekEnd:
		base = int64(b.size)
	default:
		return 0, errors.New("page buffer: invalid whence")
	}
	at := base + offset
	if at < 0 {
		return 0, errNegativeOffset
	}
	b.off = int(at)
	return at, nil
}
