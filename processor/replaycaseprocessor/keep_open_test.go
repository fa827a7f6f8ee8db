package replaycaseprocessor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/replaycase"
)

// halves is one Traceloop run cut as an agent exports a long run: the children first, the root
// span (no parent) later.
func halves(t *testing.T, n int) (head, tail ptrace.Traces) {
	head, tail = testfixtures.Traces(t, testfixtures.Traceloop), testfixtures.Traces(t, testfixtures.Traceloop)
	testfixtures.WithTraceID(head, plog.NewLogs(), n)
	testfixtures.WithTraceID(tail, plog.NewLogs(), n)
	forEachScopeSpans(head, func(ss ptrace.ScopeSpans) {
		ss.Spans().RemoveIf(func(sp ptrace.Span) bool { return sp.ParentSpanID().IsEmpty() })
	})
	forEachScopeSpans(tail, func(ss ptrace.ScopeSpans) {
		ss.Spans().RemoveIf(func(sp ptrace.Span) bool { return !sp.ParentSpanID().IsEmpty() })
	})
	return head, tail
}

// A graceful restart of a tier-2 collector (SIGTERM, a rolling update) with
// keep_open_on_shutdown: the run open at shutdown stays in storage and, restored, joins the rest
// of its trace consumed after the restart: one whole case. Closing it at shutdown wrote the
// first half as a case of its own and the rest as a second row of the same trace.
func TestKeepOpenOnShutdownContinuesTheRunAfterARestart(t *testing.T) {
	dir := t.TempDir()
	keep := func(c *Config) { c.Storage, c.KeepOpenOnShutdown = &storageID, true }
	head, tail := halves(t, 1)

	first, ext := startWithStorage(t, dir, keep)
	first.sendTraces(head)
	first.advance(time.Second)
	first.shutdown()
	assert.Empty(t, first.cases(), "the open run is not closed at shutdown")
	require.NoError(t, ext.Shutdown(context.Background()))

	second, ext := startWithStorage(t, dir, keep)
	second.sendTraces(tail)
	second.advance(3 * time.Second)
	cases := second.cases()
	require.Len(t, cases, 1, "one case for the run")
	assert.Equal(t, replaycase.StatusAccepted, cases[0].Status, "%v", cases[0].Reasons)
	assert.Equal(t, int64(5), cases[0].Provenance.SpanCount)
	second.shutdown()
	require.NoError(t, ext.Shutdown(context.Background()))
}

// Closed cases are still sent at shutdown; only the open ones stay.
func TestKeepOpenOnShutdownStillSendsClosedCases(t *testing.T) {
	dir := t.TempDir()
	h, ext := startWithStorage(t, dir, func(c *Config) { c.Storage, c.KeepOpenOnShutdown = &storageID, true })
	h.sendTraces(oneRun(t, 1))
	h.clock = h.clock.Add(3 * time.Second)
	h.p.mu.Lock()
	for e := h.p.order.Front(); e != nil; e = h.p.order.Front() {
		h.p.outbox = append(h.p.outbox, h.p.take(e.Value.(*traceBuffer), replaycase.ClosedRootEnded, ""))
	}
	h.p.mu.Unlock()
	head, _ := halves(t, 2)
	h.sendTraces(head)
	h.shutdown()
	require.Len(t, h.cases(), 1, "the closed case was sent, the open half was not")
	require.NoError(t, ext.Shutdown(context.Background()))
}

func TestKeepOpenOnShutdownRequiresStorage(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.KeepOpenOnShutdown = true
	assert.ErrorContains(t, cfg.Validate(), "keep_open_on_shutdown requires storage")
}
