package dataset

import (
	"encoding/binary"
	"fmt"

	"github.com/parquet-go/parquet-go/format"
)

// What a page's bytes decompress to, bounded by its codec (see page_headers.go).
//
// parquet-go allocates the uncompressed_page_size a header claims before it decompresses the
// page (Column.decompress); the footer's total for the column chunk bounds one forged header,
// but not a footer forged with it. The compressed bytes are bounded by the file (checked), and
// each codec bounds what they decompress to:
//
//   - UNCOMPRESSED: the page's bytes are the page (parquet-go does not decompress; the claim
//     must not exceed them).
//   - SNAPPY: an element of n bytes copies at most 64 bytes (a copy with a 2-byte offset: 3
//     bytes); literals are themselves: at most 64/3 < 22 times the compressed bytes.
//   - GZIP: deflate codes at most 258 bytes with two bits (a length and a distance of one-bit
//     Huffman codes): at most 1032 times. A ratio here, not the trailer's ISIZE, which is at the
//     page's end (not read with the header) and which a page of several members has several of.
//   - ZSTD: no useful ratio (an RLE block of 4 bytes is 128 KiB; legitimate pages of repeated
//     values compress thousands of times), so its frames are walked as their bytes are read,
//     without decompressing: each frame's header gives its Frame_Content_Size, when it has one,
//     and each block header its size (raw and RLE) or at most 128 KiB (compressed); a frame
//     decompresses to no more than the least of those. The page's last bytes are read before
//     parquet-go decompresses them, and the read that holds the page's last block header fails
//     when the header claims more than its frames decompress to, or when the page's bytes are
//     not zstd frames (the decoder would fail on them, after the allocation).
//
// In data pages v2, the levels that precede the compressed values are not compressed: they
// count as themselves. Other codecs (LZ4, Brotli, LZO) keep the footer's bound only.
const (
	snappyRatio = 22
	gzipRatio   = 1032
	// zstdBlockMax is the most a zstd block decompresses to (Block_Maximum_Size).
	zstdBlockMax = 128 << 10
)

// zstdWalk is what the walk of one page's zstd frames knows at a frame or block header.
type zstdWalk struct {
	header   int64 // where the page's header starts (for the error)
	end      int64 // where the page's bytes end
	claimed  int64 // what the page header claims its frames decompress to
	before   int64 // at most what the page's frames before this one decompress to
	frame    int64 // at most what this frame's blocks before this one decompress to
	fcs      int64 // this frame's content size, or -1
	checksum bool  // this frame's last block is followed by a 4-byte checksum
	block    bool  // a block header starts here; otherwise a frame's
}

// decompressed checks the uncompressed size the page header just decoded claims (h.header, at
// s.at, its page's bytes at body) against what its codec's bytes decompress to; for zstd, it
// starts the walk of the page's frames.
func (h *pageHeaders) decompressed(s headerStart, codec format.CompressionCodec, body int64) error {
	compressed, claimed := int64(h.header.CompressedPageSize), int64(h.header.UncompressedPageSize)
	levels, isCompressed := int64(0), codec != format.Uncompressed
	if v2 := &h.header.DataPageHeaderV2; v2.Valid && h.header.Type == format.DataPageV2 {
		rep, def := int64(v2.V.RepetitionLevelsByteLength), int64(v2.V.DefinitionLevelsByteLength)
		if rep < 0 || def < 0 {
			return nil // parquet-go refuses the header (validatePageHeader)
		}
		levels = rep + def
		if levels > compressed {
			return fmt.Errorf("%w: the page header at byte %d claims %d bytes of levels in a page of %d bytes",
				ErrUnreadable, s.at, levels, compressed)
		}
		isCompressed = isCompressed && (!v2.V.IsCompressed.Valid || v2.V.IsCompressed.V)
	}
	bound, what := int64(-1), ""
	switch {
	case !isCompressed:
		bound, what = compressed, "its bytes are not compressed"
	case codec == format.Snappy:
		bound, what = levels+snappyRatio*(compressed-levels), "Snappy decompresses at most 22 times"
	case codec == format.Gzip:
		bound, what = levels+gzipRatio*(compressed-levels), "gzip decompresses at most 1032 times"
	case codec == format.Zstd && compressed == levels:
		bound, what = levels, "it holds no zstd frame"
	case codec == format.Zstd:
		h.addWalk(body+levels, s.chunk, zstdWalk{header: s.at, end: body + compressed, claimed: claimed - levels, fcs: -1})
	}
	if bound >= 0 && claimed > bound {
		return fmt.Errorf("%w: the page header at byte %d claims a page of %d bytes uncompressed; its %d bytes hold at most %d (%s)",
			ErrUnreadable, s.at, claimed, compressed, bound, what)
	}
	return nil
}

// walk decodes the zstd frame or block header that starts at s from b, its bytes read so far
// (in reads reads), and lists the next one, or checks the page's claim at the end of its bytes.
func (h *pageHeaders) walk(s headerStart, b []byte, reads int) error {
	w := h.walks[s.walk-1]
	left := w.end - s.at
	b = b[:min(int64(len(b)), left)]
	need := func(n int64) bool { return int64(len(b)) >= n }
	// short waits for the next read, when b ends before the n bytes of a header.
	short := func(n int64) error {
		if n > left {
			return h.notZstd(w, s.at, "a zstd header runs past the page's end")
		}
		if reads >= maxHeaderReads {
			return fmt.Errorf("%w: the zstd header at byte %d does not end within %d reads", ErrUnreadable, s.at, reads)
		}
		h.wait(s.at+int64(len(b)), pendingHeader{s, append([]byte(nil), b...), reads})
		return nil
	}
	if !w.block {
		if !need(4) {
			return short(4)
		}
		switch magic := binary.LittleEndian.Uint32(b); {
		case magic&0xFFFFFFF0 == 0x184D2A50: // a skippable frame: decompresses to nothing
			if !need(8) {
				return short(8)
			}
			return h.nextFrame(s, w, s.at+8+int64(binary.LittleEndian.Uint32(b[4:])), w.before)
		case magic != 0xFD2FB528:
			return h.notZstd(w, s.at, fmt.Sprintf("no zstd magic number (%#x)", magic))
		}
		if !need(5) {
			return short(5)
		}
		d := b[4]
		if d&0x08 != 0 {
			return h.notZstd(w, s.at, "a reserved bit of the frame header is set")
		}
		single := d&0x20 != 0
		size := int64(5)
		if !single {
			size++ // Window_Descriptor
		}
		size += [4]int64{0, 1, 2, 4}[d&3] // Dictionary_ID
		fcsSize := [4]int64{0, 2, 4, 8}[d>>6]
		if fcsSize == 0 && single {
			fcsSize = 1
		}
		if !need(size + fcsSize) {
			return short(size + fcsSize)
		}
		next := w
		next.frame, next.checksum, next.block = 0, d&0x04 != 0, true
		switch f := b[size : size+fcsSize]; fcsSize {
		case 1:
			next.fcs = int64(f[0])
		case 2:
			next.fcs = int64(binary.LittleEndian.Uint16(f)) + 256
		case 4:
			next.fcs = int64(binary.LittleEndian.Uint32(f))
		case 8:
			next.fcs = int64(min(binary.LittleEndian.Uint64(f), 1<<62))
		}
		return h.nextBlock(s, next, s.at+size+fcsSize)
	}
	// a block's header
	if !need(3) {
		return short(3)
	}
	header := int64(b[0]) | int64(b[1])<<8 | int64(b[2])<<16
	last, size := header&1 != 0, header>>3
	content, out := size, size
	switch header >> 1 & 3 {
	case 1: // RLE: one byte, repeated
		content = 1
	case 2: // compressed
		out = zstdBlockMax
	case 3:
		return h.notZstd(w, s.at, "a block of the reserved type")
	}
	w.frame += out
	next := s.at + 3 + content
	if !last {
		return h.nextBlock(s, w, next)
	}
	if w.checksum {
		next += 4
	}
	frame := w.frame
	if w.fcs >= 0 {
		frame = min(frame, w.fcs)
	}
	return h.nextFrame(s, w, next, w.before+frame)
}

// nextBlock lists the block header at at, of the frame w walks.
func (h *pageHeaders) nextBlock(s headerStart, w zstdWalk, at int64) error {
	if at >= w.end {
		return h.notZstd(w, s.at, "a zstd frame ends without its last block")
	}
	h.addWalk(at, s.chunk, w)
	return nil
}

// nextFrame lists the frame after the one ending at at, whose page's frames up to there
// decompress to at most before; at the page's end, it checks the page header's claim.
func (h *pageHeaders) nextFrame(s headerStart, w zstdWalk, at, before int64) error {
	switch {
	case at > w.end:
		return h.notZstd(w, s.at, "a zstd frame runs past the page's end")
	case at == w.end:
		if w.claimed > before {
			return fmt.Errorf("%w: the page header at byte %d claims its zstd frames decompress to %d bytes; they decompress to at most %d",
				ErrUnreadable, w.header, w.claimed, before)
		}
		return nil
	}
	w.before, w.frame, w.fcs, w.checksum, w.block = before, 0, -1, false, false
	h.addWalk(at, s.chunk, w)
	return nil
}

// notZstd is the error of a page whose bytes are not zstd frames at at.
func (h *pageHeaders) notZstd(w zstdWalk, at int64, why string) error {
	return fmt.Errorf("%w: the page whose header is at byte %d does not hold zstd frames: at byte %d, %s", ErrUnreadable, w.header, at, why)
}
