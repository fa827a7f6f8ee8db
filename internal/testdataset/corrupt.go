package testdataset

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"os"
	"testing"

	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
	"github.com/stretchr/testify/require"
)

// Corruption is a way a data page's bytes go bad while the file's footer stays sound.
type Corruption int

const (
	// PageHeaderGarbage overwrites the page header: it no longer decodes.
	PageHeaderGarbage Corruption = iota
	// PageSizeWrong makes the header's compressed page size one byte short.
	PageSizeWrong
	// PageBodyBadCRC flips bytes of the page's (compressed) body; its checksum no longer matches.
	PageBodyBadCRC
	// PageBodyBadBytes flips bytes of the page's body and writes their checksum into the
	// header, so that the bytes reach the decompressor (or, uncompressed, the value decoder).
	PageBodyBadBytes
	// PageSizeGigabyte makes the header claim a compressed page of 1 GiB, which the file does
	// not hold: parquet-go allocates the size a header claims before it reads the page.
	PageSizeGigabyte
	// PageValuesGigabyte makes a data page header claim 2^30 values: parquet-go allocates a byte
	// for each before it decodes their levels (in a column that has levels).
	PageValuesGigabyte
	// PageUncompressedGigabyte makes the header claim a page of 1 GiB uncompressed: parquet-go
	// allocates as much before it decompresses the page (a reader refuses it unless the footer
	// claims as much for the column chunk: forge that too with EditFooter).
	PageUncompressedGigabyte
)

// CorruptPage corrupts the first data page of a column in one row group of the data file at
// path, found through the footer's column chunk metadata; the footer is left as it was.
func CorruptPage(t testing.TB, path string, rowGroup int, how Corruption, column ...string) {
	t.Helper()
	CorruptNthPage(t, path, rowGroup, 0, how, column...)
}

// CorruptNthPage is CorruptPage of the page-th data page of the column chunk (counted from 0),
// found through the chunk's offset index.
func CorruptNthPage(t testing.TB, path string, rowGroup, page int, how Corruption, column ...string) {
	t.Helper()
	pf := OpenParquet(t, path)
	leaf, ok := pf.Schema().Lookup(column...)
	require.True(t, ok, "%s has no column %v", path, column)
	index, err := pf.RowGroups()[rowGroup].ColumnChunks()[leaf.ColumnIndex].OffsetIndex()
	require.NoError(t, err)
	require.Less(t, page, index.NumPages(), "the column chunk's pages")
	offset := index.Offset(page)
	b, err := os.ReadFile(path)
	require.NoError(t, err)

	var header format.PageHeader
	protocol := new(thrift.CompactProtocol)
	r := protocol.NewReaderFromBytes(b[offset:])
	require.NoError(t, thrift.NewDecoder(r).Decode(&header))
	headerSize := r.BytesRead()
	body := b[offset+int64(headerSize) : offset+int64(headerSize)+int64(header.CompressedPageSize)]
	flip := func(mask byte) {
		for i := len(body) / 3; i < len(body)/3+4 && i < len(body); i++ {
			body[i] ^= mask
		}
	}
	// rewrite puts the header back; it must keep its size, or the pages after it would move.
	rewrite := func() bool {
		encoded, err := thrift.Marshal(protocol, &header)
		require.NoError(t, err)
		if len(encoded) != headerSize {
			return false
		}
		copy(b[offset:], encoded)
		return true
	}

	switch how {
	case PageHeaderGarbage:
		for i := range headerSize {
			b[offset+int64(i)] = 0xff
		}
	case PageSizeWrong:
		header.CompressedPageSize--
		require.True(t, rewrite(), "the header keeps its size")
	case PageBodyBadCRC:
		flip(0xa5)
	case PageSizeGigabyte:
		header.CompressedPageSize = 1 << 30
		rewritePadded(t, b[offset:], &header, headerSize)
	case PageUncompressedGigabyte:
		header.UncompressedPageSize = 1 << 30
		rewritePadded(t, b[offset:], &header, headerSize)
	case PageValuesGigabyte:
		require.True(t, header.DataPageHeader.Valid, "a data page v1")
		header.DataPageHeader.V.NumValues = 1 << 30
		rewritePadded(t, b[offset:], &header, headerSize)
	case PageBodyBadBytes:
		// The checksum's encoded size depends on its value: try masks until it keeps its size.
		original := bytes.Clone(body)
		rewritten := false
		for mask := 1; mask < 256 && !rewritten; mask++ {
			copy(body, original)
			flip(byte(mask))
			header.CRC = int32(crc32.ChecksumIEEE(body))
			rewritten = rewrite()
		}
		require.True(t, rewritten, "a corruption whose checksum keeps the header's size")
	}
	require.NoError(t, os.WriteFile(path, b, 0o644))
}

// rewritePadded writes header over the header of headerSize bytes at the start of b. A size
// that grew takes room from the header's checksum and statistics, which it drops, and what is
// left over is filled with a field no reader knows.
func rewritePadded(t testing.TB, b []byte, header *format.PageHeader, headerSize int) {
	t.Helper()
	header.CRC = 0
	header.DataPageHeader.V.Statistics = format.Statistics{}
	header.DataPageHeaderV2.V.Statistics = format.Statistics{}
	protocol := new(thrift.CompactProtocol)
	encoded, err := thrift.Marshal(protocol, header)
	require.NoError(t, err)
	filler := headerSize - len(encoded) - 3 // bytes of the unknown field's value
	require.True(t, filler >= 0 && filler < 128, "a header of %d bytes has room for the forged one", headerSize)
	encoded = append(encoded[:len(encoded)-1], 0x08, 40, byte(filler)) // binary field 20 (zigzag 40), its length
	encoded = append(append(encoded, make([]byte, filler)...), 0)      // its value, the header's end
	var forged format.PageHeader
	r := protocol.NewReaderFromBytes(encoded)
	require.NoError(t, thrift.NewDecoder(r).Decode(&forged))
	require.Equal(t, headerSize, r.BytesRead())
	copy(b, encoded)
}

// EditFooter rewrites the footer of the data file at path as edit leaves it (the pages are left
// as they were): a footer whose lengths or offsets are forged.
func EditFooter(t testing.TB, path string, edit func(*format.FileMetaData)) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	size := int64(binary.LittleEndian.Uint32(b[len(b)-8:]))
	footer := b[int64(len(b))-8-size : len(b)-8]
	var metadata format.FileMetaData
	protocol := new(thrift.CompactProtocol)
	require.NoError(t, thrift.Unmarshal(protocol, footer, &metadata))
	edit(&metadata)
	footer, err = thrift.Marshal(protocol, &metadata)
	require.NoError(t, err)
	out := append(b[:int64(len(b))-8-size:int64(len(b))-8-size], footer...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(footer)))
	require.NoError(t, os.WriteFile(path, append(out, "PAR1"...), 0o644))
}
