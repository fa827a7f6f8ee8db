package dataset_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/format"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	. "github.com/reprise-dev/reprise/dataset"
)

// zstdFramed is ZSTD whose pages are framed as other writers frame them: encode makes the
// bytes of a page, which parquet-go's zstd decoder reads.
type zstdFramed struct {
	name   string
	encode func(t *testing.T, src []byte) []byte
	t      *testing.T
}

func (c *zstdFramed) String() string                            { return "ZSTD" }
func (c *zstdFramed) CompressionCodec() format.CompressionCodec { return format.Zstd }
func (c *zstdFramed) Encode(dst, src []byte) ([]byte, error) {
	return append(dst[:0], c.encode(c.t, src)...), nil
}
func (c *zstdFramed) Decode(dst, src []byte) ([]byte, error) { return parquet.Zstd.Decode(dst, src) }

// streamed is src compressed by a zstd stream (as parquet-mr's zstd-jni streams write pages):
// no Frame_Content_Size, a checksum, blocks of at most window bytes.
func streamed(t *testing.T, src []byte, window int) []byte {
	var b bytes.Buffer
	w, err := zstd.NewWriter(&b, zstd.WithEncoderCRC(true), zstd.WithWindowSize(window), zstd.WithEncoderConcurrency(1))
	require.NoError(t, err)
	_, err = w.Write(src)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return b.Bytes()
}

func encodedAll(t *testing.T, src []byte) []byte {
	w, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
	require.NoError(t, err)
	return w.EncodeAll(src, nil)
}

// The zstd pages other writers write are read whole, in reads of any size: frames without a
// content size and with a checksum, of many blocks (a 1 KiB window), several frames to a page,
// a skippable frame before the page's frame. The walk of their frames (page_codecs.go) bounds
// each page by what its blocks decompress to and refuses none.
func TestZstdPagesAsOtherWritersFrameThemAreRead(t *testing.T) {
	framings := []*zstdFramed{
		{name: "streamed", encode: func(t *testing.T, src []byte) []byte { return streamed(t, src, 256<<10) }},
		{name: "small blocks", encode: func(t *testing.T, src []byte) []byte { return streamed(t, src, 1<<10) }},
		{name: "two frames", encode: func(t *testing.T, src []byte) []byte {
			return append(encodedAll(t, src[:len(src)/2]), streamed(t, src[len(src)/2:], 1<<10)...)
		}},
		{name: "skippable frame", encode: func(t *testing.T, src []byte) []byte {
			skip := binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, 0x184D2A53), 5)
			return append(append(skip, "abcde"...), encodedAll(t, src)...)
		}},
	}
	cases := manyCases(t)
	for _, framing := range framings {
		t.Run(framing.name, func(t *testing.T) {
			framing.t = t
			defer WithCodec("test-zstd", framing)()
			dir := t.TempDir()
			w, err := NewWriter(WriterConfig{
				Root: filepath.Join(dir, "data"), Staging: filepath.Join(dir, "data.staging"),
				Compression: "test-zstd", MaxRowsPerFile: 100, RowGroupRows: 10,
			})
			require.NoError(t, err)
			res, err := w.Write(cases)
			require.NoError(t, err)
			require.Len(t, res.Files, 1)
			for _, size := range []int{16, 17, 100, 4096} {
				rows, err := ReadCasesBufferedBy(res.Files[0].Path, size)
				require.NoError(t, err, "reading %d bytes at a time", size)
				assert.Len(t, rows, 25, "reading %d bytes at a time", size)
			}
			b, err := os.ReadFile(res.Files[0].Path)
			require.NoError(t, err)
			for name, err := range readEveryWay(t, res.Files[0].Path, b) {
				assert.NoError(t, err, name)
			}
		})
	}
}

// Data pages v2, which other writers write (this package writes v1): their levels precede the
// compressed values uncompressed, and count as themselves. Files of every codec are read whole.
func TestDataPagesV2OfEveryCodecAreRead(t *testing.T) {
	rows := make([]CaseRow, 200)
	for i := range rows {
		rows[i].CaseID = fmt.Sprintf("case-%04d", i)
	}
	for _, codec := range []compress.Codec{&parquet.Zstd, &parquet.Snappy, &parquet.Gzip, &parquet.Uncompressed} {
		path := filepath.Join(t.TempDir(), "v2.parquet")
		f, err := os.Create(path)
		require.NoError(t, err)
		w := parquet.NewGenericWriter[CaseRow](f, parquet.DataPageVersion(2), parquet.Compression(codec),
			parquet.KeyValueMetadata(SchemaVersionKey, SchemaVersion), parquet.PageBufferSize(512))
		_, err = w.Write(rows)
		require.NoError(t, err)
		require.NoError(t, w.Close())
		require.NoError(t, f.Close())
		for _, size := range []int{16, 4096} {
			got, err := ReadCasesBufferedBy(path, size)
			require.NoError(t, err, "%s, reading %d bytes at a time", codec, size)
			assert.Len(t, got, len(rows), "%s, reading %d bytes at a time", codec, size)
		}
	}
}
