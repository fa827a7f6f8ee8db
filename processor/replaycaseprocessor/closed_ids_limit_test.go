package replaycaseprocessor

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// The ids the remembered closes hold are inside limits.max_buffered_bytes, not beside it: open
// cases and ids together stay within the limit, and the oldest ids are forgotten to make room
// before any open case is closed early. Once no id is left, an open case is closed as before.
func TestRememberedIDsAreInsideTheByteLimit(t *testing.T) {
	h := newHarness(t, nil)
	const closed, open = 200, 10
	for n := 1; n <= closed; n++ {
		h.sendTraces(oneRun(t, n))
	}
	h.advance(3 * time.Second) // every run closed: their ids are remembered
	require.Len(t, h.cases(), closed)
	for n := closed + 1; n <= closed+open; n++ {
		h.sendTraces(oneRun(t, n))
	}
	h.p.mu.Lock()
	require.Len(t, h.p.open, open)
	run := h.p.openBytes / open
	ids := h.p.closed.held.bytes
	require.Greater(t, ids, run, "the test needs more ids than one run takes")
	// Room for one more open run and half the ids: without the ids, no case had to close.
	limit := (open+1)*run + ids/2
	h.p.cfg.Limits.MaxBufferedBytes = limit
	h.p.mu.Unlock()

	h.sendTraces(oneRun(t, closed+open+1))
	h.p.mu.Lock()
	assert.Len(t, h.p.open, open+1, "no open case was closed: the ids made room")
	assert.LessOrEqual(t, h.p.openBytes+h.p.closed.held.bytes, limit, "open cases and ids fit in the limit")
	assert.Positive(t, h.p.closed.held.bytes, "only the oldest ids were forgotten")
	assert.False(t, h.p.closed.heldSpan(traceIDOf(t, oneRun(t, 1)), firstSpanID(oneRun(t, 1))), "the oldest close's ids are forgotten")
	assert.True(t, h.p.closed.heldSpan(traceIDOf(t, oneRun(t, closed)), firstSpanID(oneRun(t, closed))), "the newest close's are kept")

	// Room for the open cases only: the next run takes every id, then closes the oldest case.
	h.p.cfg.Limits.MaxBufferedBytes = (open+1)*run + run/2
	h.p.mu.Unlock()
	h.sendTraces(oneRun(t, closed+open+2))
	h.p.mu.Lock()
	assert.Len(t, h.p.open, open+1, "one open case closed for the new one")
	assert.False(t, h.p.closed.heldSpan(traceIDOf(t, oneRun(t, closed)), firstSpanID(oneRun(t, closed))), "every id went before it")
	h.p.mu.Unlock()
	h.shutdown()
}

func traceIDOf(t *testing.T, td ptrace.Traces) pcommon.TraceID {
	t.Helper()
	return td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).TraceID()
}

func firstSpanID(td ptrace.Traces) pcommon.SpanID {
	return td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).SpanID()
}
