package dataset

import (
	"sync"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/snappy"
	"github.com/parquet-go/parquet-go/format"
)

// zstdSmallWindow is ZSTD with a 256 KiB window instead of the 8 MiB of the default level.
// Every encoder keeps a history buffer of about twice its window, and the writer compresses
// each column's pages separately: pages are at most 256 KiB (steps/; 64 KiB in cases/ and
// quarantine/, casePageBytes), except one holding a single larger value, so a page fits in the
// window and a larger one finds nothing more. With 1 MiB each encoder's history was 1.5 MiB
// larger (twice the window's difference), during the merge, the paced benchmark's largest heap.
// go test -run '^$' -bench MergeMemory -benchtime 1x ./exporter/replayparquetexporter/ gave the
// same dataset bytes with both windows, and merge peaks within that benchmark's noise
// (docs/benchmarks.md). The files are ordinary ZSTD: any reader decodes them.
type zstdSmallWindow struct {
	encoders sync.Pool
}

const zstdWindow = 256 << 10

func (c *zstdSmallWindow) String() string                            { return "ZSTD" }
func (c *zstdSmallWindow) CompressionCodec() format.CompressionCodec { return format.Zstd }

func (c *zstdSmallWindow) Encode(dst, src []byte) ([]byte, error) {
	e, _ := c.encoders.Get().(*zstd.Encoder)
	if e == nil {
		var err error
		e, err = zstd.NewWriter(nil,
			zstd.WithEncoderConcurrency(1),
			zstd.WithWindowSize(zstdWindow),
			zstd.WithZeroFrames(true),
			zstd.WithEncoderCRC(false))
		if err != nil {
			return nil, err
		}
	}
	defer c.encoders.Put(e)
	return e.EncodeAll(src, dst[:0]), nil
}

func (c *zstdSmallWindow) Decode(dst, src []byte) ([]byte, error) {
	return parquet.Zstd.Decode(dst, src)
}

// snappyFast is Snappy in the fast mode of the s2 package. parquet-go's Snappy codec calls the
// snappy package of klauspost/compress, whose Encode is the "better" mode: it looks harder for
// matches and allocates its hash tables for every page (13 MB of the 874 MB the collector
// allocated in a paced run: BENCH_PROFILE=DIR scripts/bench-pipeline.sh, then go tool pprof
// -sample_index=alloc_space on DIR/paced-1-heap.pprof). Segments are read back once, moments
// later (segments.go): the fast mode, whose tables are on the stack, is enough there.
// The blocks are ordinary Snappy: any reader decodes them.
type snappyFast struct{ snappy.Codec }

func (*snappyFast) Encode(dst, src []byte) ([]byte, error) {
	return s2.EncodeSnappy(dst[:cap(dst)], src), nil
}
