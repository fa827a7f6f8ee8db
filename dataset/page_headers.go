package dataset

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"sync"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// Page headers that claim more than the file holds.
//
// parquet-go allocates the compressed_page_size a page header claims (an int32: up to 2 GiB)
// before it reads the page and finds it short (FilePages.readPage), the uncompressed_page_size
// before it decompresses (Column.decompress), a byte for each of the num_values it claims before
// it decodes their levels (decodeLevels), four for each value of a dictionary (decodeDictionary),
// and the length of each binary field of the header (its statistics) as it decodes it. One
// corrupt header in a file of kilobytes made every reader allocate ~1.3 GiB (the test
// TestAPageHeaderThatClaimsAGigabyteIsRefusedBeforeItIsAllocated, 2026-12-07). pageHeaders bounds those claims at our boundary, in readErrors.ReadAt,
// without a read of its own: every byte of a page header reaches parquet-go through a ReadAt
// (a bufio.Reader over an io.SectionReader of the column chunk), and pageHeaders decodes the
// headers it knows to start in the bytes read, with parquet-go's own thrift decoder, before
// ReadAt returns them. A header whose page, or one of whose binary fields, runs past the end of
// its column chunk, whose uncompressed size or count of values is larger than the footer says
// the whole chunk's are, or whose dictionary claims more values than its page has bits, fails
// the read with an error that wraps ErrUnreadable; parquet-go, which has not seen its bytes,
// returns that error instead of allocating. The footer's counts bound what one forged header
// claims; a footer forged to claim as much as the header (1 GiB uncompressed for a chunk of
// kilobytes: TestAPageHeaderAndAFooterThatBothClaimAGigabyteAreRefused) is bounded by the page's
// codec: an uncompressed_page_size larger than what the page's bytes decompress to is refused,
// with the header for Snappy, gzip and uncompressed pages (a ratio), and for zstd with the read
// of the page's last bytes, before parquet-go decompresses them, after a walk of its frames
// (page_codecs.go). A count of values is not bounded by the page's bytes (a run of levels takes
// a few bytes however long, as a page of nulls legitimately does): a num_values forged in the
// header and in the footer of a repeated column (rowsAgree holds the others' to their row
// group's rows) is left to parquet-go, as are the pages of other codecs (LZ4, Brotli).
//
// Where headers start: at each column chunk's first page (its dictionary page, or its first data
// page) and its first data page (the footer), at each page the chunk's offset index places
// (parquet-go seeks there; the index is registered when loaded: readErrors.offsetIndex), and
// after each header checked, past the page it claims (a chunk's pages are read in sequence). A
// header cut by the end of a read is decoded again with the next read of its stream, which
// starts where the other ended (pending). The frame and block headers of a zstd page are
// listed as starts too, each after the one before, and are decoded the same way.

// maxHeaderReads is how many reads a page header may span. A sound header takes one to a few
// (each binary field of its statistics, at most 4 KiB in files of this package, and far longer
// in files of older builds, is read in one read); one that does not end is refused rather than
// decoded again with each read.
const maxHeaderReads = 64

// pageHeaders checks the page headers in the bytes read from one data file (see above). Its
// methods are safe for concurrent use.
type pageHeaders struct {
	pf      *parquet.File
	size    int64
	indexed bool // the offset indexes were read with the footer (openFile)

	mu      sync.Mutex
	built   bool
	chunks  []chunkBytes  // the column chunks, by their first byte
	starts  []headerStart // where headers start, by offset
	pending map[int64][]pendingHeader
	seen    map[parquet.OffsetIndex]bool // offset indexes registered since
	walks   []zstdWalk                   // of the zstd pages whose headers were checked
	scratch []byte                       // a pending header and the bytes read after it
	reader  *headerReader
	decoder *thrift.Decoder
	header  format.PageHeader
}

// chunkBytes is the byte range of a column chunk, [from, to) (cut at the file's end), where its
// data pages start, and the size of its pages uncompressed and its count of values, as the
// footer says; reach is the
// largest to of the chunks up to it (a forged footer may overlap chunks).
type chunkBytes struct {
	from, to, data, uncompressed, values, reach int64
	codec                                       format.CompressionCodec
}

// headerStart is where a page header starts, in which column chunk (an index of chunks); or,
// when walk is not 0, where a zstd frame or block header of a page's bytes starts, and what
// the walk of the page's frames knows there (walks[walk-1]).
type headerStart struct {
	at    int64
	chunk int
	walk  int32
}

// pendingHeader is a header a read ended inside: its start, the bytes of it read so far, and
// in how many reads.
type pendingHeader struct {
	start headerStart
	b     []byte
	reads int
}

func newPageHeaders(pf *parquet.File, size int64, indexed bool) *pageHeaders {
	return &pageHeaders{pf: pf, size: size, indexed: indexed}
}

// build lists the column chunks and the header starts the footer (and the offset indexes read
// with it) tell, on the first read of the file's pages: an open that reads only the footer does
// not pay for it.
func (h *pageHeaders) build() {
	if h.built {
		return
	}
	h.built = true
	groups := h.pf.Metadata().RowGroups
	n := 0
	for _, rg := range groups {
		n += len(rg.Columns)
	}
	h.chunks = make([]chunkBytes, 0, n) // one allocation each: a merge opens every segment
	starts := 0
	for _, rg := range groups {
		for _, cc := range rg.Columns {
			md := cc.MetaData
			from := md.DataPageOffset // as parquet-go places the chunk's section (FilePages.init)
			if md.DictionaryPageOffset != 0 {
				from = md.DictionaryPageOffset
			}
			if from < 0 || from >= h.size || md.TotalCompressedSize <= 0 {
				continue // no byte of it can be read
			}
			c := chunkBytes{from: from, to: from + min(md.TotalCompressedSize, h.size-from), uncompressed: md.TotalUncompressedSize,
				values: md.NumValues, data: md.DataPageOffset, codec: md.Codec}
			h.chunks = append(h.chunks, c)
			starts++
			if c.data > c.from && c.data < c.to {
				starts++
			}
		}
	}
	slices.SortFunc(h.chunks, func(a, b chunkBytes) int { return cmp.Compare(a.from, b.from) })
	h.starts = make([]headerStart, 0, starts+16) // room for a few pages read on
	reach := int64(0)
	for k := range h.chunks {
		c := &h.chunks[k]
		reach = max(reach, c.to)
		c.reach = reach
		h.starts = append(h.starts, headerStart{at: c.from, chunk: k})
		if c.data > c.from && c.data < c.to {
			h.starts = append(h.starts, headerStart{at: c.data, chunk: k})
		}
	}
	slices.SortFunc(h.starts, func(a, b headerStart) int { return cmp.Compare(a.at, b.at) })
	for g := range groups {
		if !h.indexed {
			break
		}
		for _, chunk := range h.pf.RowGroups()[g].ColumnChunks() {
			// Loaded with the footer: the cached index is returned, nothing is read.
			if fc, ok := chunk.(*parquet.FileColumnChunk); ok {
				if index, err := fc.OffsetIndexFrom(noReads{}); err == nil {
					h.addIndex(index)
				}
			}
		}
	}
	r := new(thrift.CompactProtocol).NewReaderFromBytes(nil)
	h.reader = &headerReader{BytesReader: r, discard: r.(interface{ Discard(int) (int, error) })}
	h.decoder = thrift.NewDecoder(h.reader)
}

// noReads is a reader of nothing.
type noReads struct{}

func (noReads) ReadAt([]byte, int64) (int, error) { return 0, errors.New("no read") }

// offsetIndex registers the page starts of a column chunk's offset index, which a page reader
// of the chunk seeks to once it is loaded: load it through readErrors.offsetIndex before reading
// the chunk's pages.
func (h *pageHeaders) offsetIndex(index parquet.OffsetIndex) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.build()
	if h.seen[index] {
		return
	}
	if h.seen == nil {
		h.seen = map[parquet.OffsetIndex]bool{}
	}
	h.seen[index] = true
	h.addIndex(index)
}

func (h *pageHeaders) addIndex(index parquet.OffsetIndex) {
	for i := range index.NumPages() {
		if k := h.chunkAt(index.Offset(i)); k >= 0 {
			h.add(headerStart{at: index.Offset(i), chunk: k})
		}
	}
}

// chunkAt is the column chunk that holds the byte at off, or -1.
func (h *pageHeaders) chunkAt(off int64) int {
	k := sort.Search(len(h.chunks), func(k int) bool { return h.chunks[k].from > off }) - 1
	for ; k >= 0 && off < h.chunks[k].reach; k-- {
		if off < h.chunks[k].to {
			return k
		}
	}
	return -1
}

// add lists a page header start (once).
func (h *pageHeaders) add(s headerStart) {
	h.insert(s, func(e headerStart) bool { return e.walk == 0 })
}

// addWalk lists the start of a zstd frame or block header at at, and what the walk of its
// page's frames knows there (once for the page whose header is at w.header: a page read again
// walks the same way). A forged file may place a page header, or a page of another chunk, at
// the same byte: each start there is decoded.
func (h *pageHeaders) addWalk(at int64, chunk int, w zstdWalk) {
	if h.insert(headerStart{at: at, chunk: chunk, walk: int32(len(h.walks) + 1)},
		func(e headerStart) bool { return e.walk != 0 && h.walks[e.walk-1].header == w.header }) {
		h.walks = append(h.walks, w)
	}
}

// insert lists s in order unless a start at s.at is the same.
func (h *pageHeaders) insert(s headerStart, same func(headerStart) bool) bool {
	i, _ := slices.BinarySearchFunc(h.starts, s.at, func(e headerStart, at int64) int { return cmp.Compare(e.at, at) })
	for j := i; j < len(h.starts) && h.starts[j].at == s.at; j++ {
		if same(h.starts[j]) {
			return false
		}
	}
	h.starts = slices.Insert(h.starts, i, s)
	return true
}

// check decodes the page headers that start in p, the bytes read at off, and those a read that
// ended at off left unfinished; its error, which wraps ErrUnreadable, refuses the read.
func (h *pageHeaders) check(p []byte, off int64) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.build()
	if pending, ok := h.pending[off]; ok {
		delete(h.pending, off)
		for j, ph := range pending {
			h.scratch = append(append(h.scratch[:0], ph.b...), p...)
			if err := h.decode(ph.start, h.scratch, ph.reads+1); err != nil {
				h.wait(off, pending[j:]...) // refused again by the next read here
				return err
			}
		}
	}
	end := off + int64(len(p))
	i, _ := slices.BinarySearchFunc(h.starts, off, func(e headerStart, at int64) int { return cmp.Compare(e.at, at) })
	for ; i < len(h.starts) && h.starts[i].at < end; i++ { // decode may add a start after i
		if err := h.decode(h.starts[i], p[h.starts[i].at-off:], 1); err != nil {
			return err
		}
	}
	return nil
}

// wait keeps headers unfinished until the read at off.
func (h *pageHeaders) wait(off int64, pending ...pendingHeader) {
	if h.pending == nil {
		h.pending = map[int64][]pendingHeader{}
	}
	h.pending[off] = append(h.pending[off], pending...)
}

// decode decodes the header that starts at s from b, its bytes read so far (in reads reads),
// and checks what it claims against its column chunk.
// A header that b ends inside waits for the next read; one that does not decode is left to
// parquet-go, which fails on the same bytes without allocating more than was checked.
func (h *pageHeaders) decode(s headerStart, b []byte, reads int) error {
	if s.walk != 0 {
		return h.walk(s, b, reads)
	}
	c := h.chunks[s.chunk]
	left := c.to - s.at // the bytes of the chunk from the header's start
	if int64(len(b)) > left {
		b = b[:left] // parquet-go reads the chunk's section only
	}
	h.reader.reset(b, left)
	h.header = format.PageHeader{}
	err := h.decoder.Decode(&h.header)
	if h.reader.refused != nil {
		return fmt.Errorf("%w: the page header at byte %d %w", ErrUnreadable, s.at, h.reader.refused)
	}
	n := int64(h.reader.BytesRead())
	switch {
	case err != nil && (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)) && int64(len(b)) < left:
		if reads >= maxHeaderReads {
			return fmt.Errorf("%w: the page header at byte %d does not end within %d reads (%d bytes)", ErrUnreadable, s.at, reads, len(b))
		}
		h.wait(s.at+int64(len(b)), pendingHeader{s, slices.Clone(b), reads}) // b is the caller's, or h.scratch

	case err != nil:
		// parquet-go fails on these bytes too.
	case int64(h.header.CompressedPageSize) > left-n:
		return fmt.Errorf("%w: the page header at byte %d claims a page of %d bytes; its column chunk holds %d bytes after the header",
			ErrUnreadable, s.at, h.header.CompressedPageSize, left-n)
	case int64(h.header.UncompressedPageSize) > max(c.uncompressed, left-n):
		return fmt.Errorf("%w: the page header at byte %d claims a page of %d bytes uncompressed; the footer says its column chunk's pages are %d bytes uncompressed",
			ErrUnreadable, s.at, h.header.UncompressedPageSize, c.uncompressed)
	case h.claimedValues() > c.values:
		return fmt.Errorf("%w: the page header at byte %d claims %d values; the footer says its column chunk holds %d",
			ErrUnreadable, s.at, h.claimedValues(), c.values)
	case h.header.DictionaryPageHeader.Valid && int64(h.header.DictionaryPageHeader.V.NumValues) > 8*max(int64(h.header.UncompressedPageSize), int64(h.header.CompressedPageSize))+8:
		return fmt.Errorf("%w: the page header at byte %d claims a dictionary of %d values in a page of %d bytes",
			ErrUnreadable, s.at, h.header.DictionaryPageHeader.V.NumValues, max(h.header.UncompressedPageSize, h.header.CompressedPageSize))
	case h.header.CompressedPageSize >= 0:
		if err := h.decompressed(s, c.codec, s.at+n); err != nil {
			return err
		}
		if next := s.at + n + int64(h.header.CompressedPageSize); next < c.to {
			h.add(headerStart{at: next, chunk: s.chunk})
		}
	}
	return nil
}

// claimedValues is the largest count of values, nulls or rows the data page header decoded
// claims: parquet-go allocates for as many levels before it decodes them (a run of levels takes
// a few bytes however long, so the page's size does not bound them; the footer's count of the
// chunk's values does).
func (h *pageHeaders) claimedValues() int64 {
	if v1 := &h.header.DataPageHeader; v1.Valid {
		return int64(v1.V.NumValues)
	}
	if v2 := &h.header.DataPageHeaderV2; v2.Valid {
		return int64(max(v2.V.NumValues, v2.V.NumNulls, v2.V.NumRows))
	}
	return 0
}

// headerReader decodes a page header from its bytes as parquet-go's thrift decoder does, and
// refuses a length (of a binary field, a list, a set or a map) longer than the bytes left in the
// header's column chunk, which parquet-go's decoder would allocate before it reads them. The
// values of binary fields are skipped, not returned: only the sizes are checked.
type headerReader struct {
	thrift.BytesReader
	discard interface{ Discard(int) (int, error) }
	left    int64 // the bytes of the column chunk from the header's start
	refused error
}

func (r *headerReader) reset(b []byte, left int64) {
	r.BytesReader.ResetBytes(b)
	r.left, r.refused = left, nil
}

// fits refuses n items or bytes, read at the reader's offset, that the chunk cannot hold.
func (r *headerReader) fits(what string, n int64) error {
	if left := r.left - int64(r.BytesRead()); n > left {
		r.refused = fmt.Errorf("claims a %s of %d bytes or items; its column chunk holds %d bytes after it", what, n, left)
		return r.refused
	}
	return nil
}

func (r *headerReader) ReadLength() (int, error) {
	n, err := r.BytesReader.ReadLength()
	if err == nil {
		err = r.fits("binary field", int64(n))
	}
	return n, err
}

func (r *headerReader) ReadBytes() ([]byte, error) {
	n, err := r.ReadLength()
	if err == nil {
		_, err = r.Discard(n)
	}
	return nil, err
}

func (r *headerReader) ReadString() (string, error) {
	_, err := r.ReadBytes()
	return "", err
}

func (r *headerReader) Discard(n int) (int, error) { return r.discard.Discard(n) }

func (r *headerReader) ReadList() (thrift.List, error) {
	l, err := r.BytesReader.ReadList()
	if err == nil {
		err = r.fits("list", int64(l.Size))
	}
	return l, err
}

func (r *headerReader) ReadSet() (thrift.Set, error) {
	s, err := r.BytesReader.ReadSet()
	if err == nil {
		err = r.fits("set", int64(s.Size))
	}
	return s, err
}

func (r *headerReader) ReadMap() (thrift.Map, error) {
	m, err := r.BytesReader.ReadMap()
	if err == nil {
		err = r.fits("map", int64(m.Size))
	}
	return m, err
}
