package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// The corpus keeps each recording's structure (parent links, the spans its log records point
// to) while no trace id or span id repeats across runs, and the same seed gives the same corpus.
func TestCorpusHasRandomIDsAndKeepsLinks(t *testing.T) {
	fixtures := filepath.Join("..", "..", "testdata", "otlp")
	corpus, err := build(fixtures, 8, 1, 0)
	require.NoError(t, err)
	again, err := build(fixtures, 8, 1, 0)
	require.NoError(t, err)
	other, err := build(fixtures, 8, 2, 0)
	require.NoError(t, err)

	traceIDs := map[pcommon.TraceID]bool{}
	spanIDs := map[pcommon.SpanID]bool{}
	logs := 0
	for i, r := range corpus {
		spans := map[pcommon.SpanID]bool{}
		var parents []pcommon.SpanID
		var traceID pcommon.TraceID
		for _, rs := range r.traces.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, sp := range ss.Spans().All() {
					traceID = sp.TraceID()
					assert.False(t, spanIDs[sp.SpanID()], "span id repeated")
					spanIDs[sp.SpanID()], spans[sp.SpanID()] = true, true
					if !sp.ParentSpanID().IsEmpty() {
						parents = append(parents, sp.ParentSpanID())
					}
				}
			}
		}
		assert.False(t, traceIDs[traceID], "trace id repeated")
		traceIDs[traceID] = true
		for _, p := range parents {
			assert.True(t, spans[p], "run %d: a parent link points outside the run", i)
		}
		for _, rl := range r.logs.ResourceLogs().All() {
			for _, sl := range rl.ScopeLogs().All() {
				for _, lr := range sl.LogRecords().All() {
					logs++
					assert.Equal(t, traceID, lr.TraceID())
					assert.True(t, lr.SpanID().IsEmpty() || spans[lr.SpanID()], "run %d: a log record points at no span of its run", i)
				}
			}
		}
		assert.Equal(t, r.traces.SpanCount(), again[i].traces.SpanCount())
		assert.Equal(t, traceID, again[i].traces.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).TraceID(), "same seed, same ids")
		assert.NotEqual(t, traceID, other[i].traces.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).TraceID(), "another seed, other ids")
	}
	assert.Len(t, traceIDs, 8)
	assert.NotZero(t, logs, "the recordings with events bring their log records")
}

// With -tools the runs' model calls offer that many tools: the OpenInference and OpenLLMetry
// recordings carry the schemas, the OpenTelemetry ones (which record no tools) do not change.
func TestCorpusOffersTools(t *testing.T) {
	fixtures := filepath.Join("..", "..", "testdata", "otlp")
	plain, err := build(fixtures, 4, 1, 0)
	require.NoError(t, err)
	offered, err := build(fixtures, 4, 1, 3)
	require.NoError(t, err)
	for i, name := range recordings {
		before, after := protoSize(t, plain[i]), protoSize(t, offered[i])
		switch name {
		case "openinference", "traceloop":
			assert.Greater(t, after, before+2*3*1000, "%s: two model calls offering three 1.2 KB schemas", name)
		default:
			assert.Equal(t, before, after, "%s records no tools", name)
		}
	}
}

func protoSize(t *testing.T, r run) int {
	b, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(r.traces)
	require.NoError(t, err)
	return len(b)
}
