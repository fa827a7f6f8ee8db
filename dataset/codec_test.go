package dataset

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/require"
)

// What snappyFast encodes, parquet-go's own Snappy codec (any Snappy reader) decodes, into and
// out of reused buffers as the page writer and reader use them.
func TestSnappyFastIsReadAsSnappy(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	random := make([]byte, 70_000)
	for i := range random {
		random[i] = byte(rng.IntN(256))
	}
	pages := [][]byte{
		nil, []byte("x"), []byte("short"),
		bytes.Repeat([]byte(`{"role":"user","content":"What is the capital of France?"},`), 2_000),
		random, append(bytes.Repeat([]byte("ab"), 40_000), random[:1000]...),
	}
	var codec snappyFast
	var enc, dec []byte
	for _, page := range pages {
		var err error
		enc, err = codec.Encode(enc[:0], page)
		require.NoError(t, err)
		dec, err = parquet.Snappy.Decode(dec[:0], enc)
		require.NoError(t, err)
		require.True(t, bytes.Equal(page, dec), "a page of %d bytes", len(page))
	}
}
