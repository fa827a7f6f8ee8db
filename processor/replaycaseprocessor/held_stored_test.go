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
	b := h.p.open[c.id]
	require.Len(t, b.held.spans, 1)
	assert.Same(t, unsafe.SliceData(c.stored), unsafe.SliceData(b.held.spans[0]), "held as stored")
	assert.Equal(t, want, decoded(b.held.spans[0]))
	// bufferEvents stores and buffers ld as ConsumeLogs does, and returns its one chunk.
	bufferEvents := func(ld plog.Logs) *logChunk {
		chunks := splitLogs(ld, false)
		require.Len(t, chunks, 1)
		require.NoError(t, h.p.wal.writeLogs(ctx, chunks))
		require.NotNil(t, chunks[0].stored)
		h.p.bufferLogs(chunks)
		return chunks[0]
	}
	events := bufferEvents(cleanLogs)
	require.Len(t, b.held.events, 1)
	assert.Same(t, unsafe.SliceData(events.stored), unsafe.SliceData(b.held.events[0]), "held as stored")

	// A client retry: every span and event is a duplicate, so the held part is what
	// de-duplication left.
	retry, retryLogs := run(0, testfixtures.OTelEvents)
	events = bufferEvents(retryLogs)
	assert.Nil(t, events.stored)
	assert.Zero(t, events.ld.LogRecordCount())
	assert.Len(t, b.held.events, 1, "nothing is left of the retried events, so nothing more is held")
	assert.True(t, events.redundant, "its record is deleted, not held")
	c = buffer(h, retry)
	assert.Zero(t, c.td.SpanCount())
	assert.True(t, c.redundant, "its record is deleted, not held")
	require.Len(t, b.held.spans, 1, "nothing is left of the retried spans, so nothing more is held")

	// A forged replay.* attribute on a span and on an event: held without it, stored with it.
	forged, forgedLogs := run(1, testfixtures.OTelEvents)
	forged.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Attributes().PutStr("replay.case_id", "forged")
	forgedLogs.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).Attributes().PutStr("replay.case_id", "forged")
	received := [][]byte{protoOfTraces(t, forged), protoOfLogs(t, forgedLogs)}
	c = buffer(h, forged)
	events = bufferEvents(forgedLogs)
	assert.Nil(t, c.stored)
	assert.Nil(t, events.stored)
	forgedBuffer := h.p.open[c.id]
	heldSpans, heldEvents := decoded(forgedBuffer.held.spans[0]), decoded(forgedBuffer.held.events[0])
	assert.Equal(t, protoOfTraces(t, c.td), heldSpans)
	assert.Equal(t, protoOfLogs(t, events.ld), heldEvents)
	assert.NotContains(t, string(heldSpans), "forged")
	assert.NotContains(t, string(heldEvents), "forged")
	recs, err := h.p.wal.records(ctx)
	require.NoError(t, err)
	var stored [][]byte
	for _, r := range recs {
		stored = append(stored, r.value)
	}
	assert.Subset(t, stored, received, "the records keep what was received")

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
