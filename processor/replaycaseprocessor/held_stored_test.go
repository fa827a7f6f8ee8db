package replaycaseprocessor

import (
	"context"
	"testing"
	"unsafe"

	"github.com/klauspost/compress/s2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/internal/testfixtures"
)

// A chunk that buffering leaves as it was stored is held as its write-ahead record's value, not
// encoded a second time. One that sanitizing, de-duplication or the span limit changed is held
// as it now is, while its record keeps what was received.
func TestChunksAreHeldAsStoredUnlessBufferingChangedThem(t *testing.T) {
	h, ext := startWithStorage(t, t.TempDir(), func(c *Config) { c.Storage = &storageID })
	defer func() { require.NoError(t, ext.Shutdown(context.Background())) }()
	ctx := context.Background()
	// buffer stores and buffers td as ConsumeTraces does, and returns its one chunk.
	buffer := func(h *harness, td ptrace.Traces) *traceChunk {
		chunks := splitTraces(td)
		require.Len(t, chunks, 1)
		require.NoError(t, h.p.wal.writeTraces(ctx, chunks))
		require.NotNil(t, chunks[0].stored)
		h.p.bufferTraces(chunks)
		return chunks[0]
	}
	heldOf := func(i int) *traceBuffer {
		td := testfixtures.Traces(t, testfixtures.OTelEvents)
		testfixtures.WithTraceID(td, plog.NewLogs(), i)
		return h.p.open[td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).TraceID()]
	}
	run := func(i int, recording string) (ptrace.Traces, plog.Logs) {
		td, ld := testfixtures.Traces(t, recording), testfixtures.Logs(t, recording)
		testfixtures.WithTraceID(td, ld, i)
		return td, ld
	}
	decoded := func(part []byte) []byte {
		body, err := s2.Decode(nil, part)
		require.NoError(t, err)
		return body
	}

	// Unchanged: the record's value is held, the same bytes in the same memory.
	clean, cleanLogs := run(0, testfixtures.OTelEvents)
	want := protoOfTraces(t, clean)
	c := buffer(h, clean)
	b := heldOf(0)
	require.Len(t, b.held.spans, 1)
	assert.Same(t, unsafe.SliceData(c.stored), unsafe.SliceData(b.held.spans[0]), "held as stored")
	assert.Equal(t, want, decoded(b.held.spans[0]))
	logChunks := splitLogs(cleanLogs, false)
	require.NoError(t, h.p.wal.writeLogs(ctx, logChunks))
	h.p.bufferLogs(logChunks)
	require.Len(t, b.held.events, 1)
	assert.Same(t, unsafe.SliceData(logChunks[0].stored), unsafe.SliceData(b.held.events[0]), "held as stored")

	// A client retry: every span is a duplicate, so the held part is what de-duplication left.
	retry, _ := run(0, testfixtures.OTelEvents)
	c = buffer(h, retry)
	assert.Nil(t, c.stored)
	require.Len(t, b.held.spans, 2)
	assert.Equal(t, protoOfTraces(t, c.td), decoded(b.held.spans[1]))
	assert.Zero(t, c.td.SpanCount())

	// A forged replay.* attribute: held without it, stored with it.
	forged, _ := run(1, testfixtures.OTelEvents)
	forged.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Attributes().PutStr("replay.case_id", "forged")
	received := protoOfTraces(t, forged)
	c = buffer(h, forged)
	assert.Nil(t, c.stored)
	held := decoded(heldOf(1).held.spans[0])
	assert.Equal(t, protoOfTraces(t, c.td), held)
	assert.NotContains(t, string(held), "forged")
	recs, err := h.p.wal.records(ctx)
	require.NoError(t, err)
	var stored [][]byte
	for _, r := range recs {
		stored = append(stored, r.value)
	}
	assert.Contains(t, stored, received, "the record keeps what was received")

	h.shutdown()

	// Past the span limit: the trace is split and each part encoded as it is.
	limited, limitedExt := startWithStorage(t, t.TempDir(), func(c *Config) { c.Storage, c.Limits.MaxSpansPerTrace = &storageID, 3 })
	defer func() { require.NoError(t, limitedExt.Shutdown(context.Background())) }()
	long, _ := run(2, testfixtures.Traceloop) // 5 spans: a case of 3 and a fragment of 2
	c = buffer(limited, long)
	assert.Nil(t, c.stored)
	assert.Equal(t, 2, c.td.SpanCount(), "the fragment's part")
	fragment := limited.p.open[c.id]
	require.Len(t, fragment.held.spans, 1)
	assert.Equal(t, protoOfTraces(t, c.td), decoded(fragment.held.spans[0]))
	limited.shutdown()
}
