package replaycaseprocessor

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// mixedTraces is two resources, the first with two scopes, interleaving spans of traces 1 and 2.
func mixedTraces() ptrace.Traces {
	td := ptrace.NewTraces()
	add := func(ss ptrace.ScopeSpans, trace, span byte, root bool) {
		sp := ss.Spans().AppendEmpty()
		sp.SetTraceID(pcommon.TraceID{trace})
		sp.SetSpanID(pcommon.SpanID{span})
		if !root {
			sp.SetParentSpanID(pcommon.SpanID{99})
		}
	}
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "a")
	s1 := rs.ScopeSpans().AppendEmpty()
	s1.Scope().SetName("s1")
	add(s1, 1, 1, false)
	add(s1, 2, 2, true)
	add(s1, 1, 3, false)
	s2 := rs.ScopeSpans().AppendEmpty()
	s2.Scope().SetName("s2")
	add(s2, 1, 4, true)
	rs2 := td.ResourceSpans().AppendEmpty()
	rs2.Resource().Attributes().PutStr("service.name", "b")
	add(rs2.ScopeSpans().AppendEmpty(), 2, 5, false)
	return td
}

func spanIDs(td ptrace.Traces) (ids []byte) {
	for i := 0; i < td.ResourceSpans().Len(); i++ {
		for j := 0; j < td.ResourceSpans().At(i).ScopeSpans().Len(); j++ {
			sps := td.ResourceSpans().At(i).ScopeSpans().At(j).Spans()
			for k := 0; k < sps.Len(); k++ {
				ids = append(ids, sps.At(k).SpanID()[0])
			}
		}
	}
	return ids
}

func TestSplitTracesGroupsByTraceKeepingResourceAndScope(t *testing.T) {
	td := mixedTraces()
	chunks := splitTraces(td)
	require.Len(t, chunks, 2)
	assert.Equal(t, make([]byte, 5), spanIDs(td), "spans are moved, not copied: the source keeps empty spans")

	one, two := chunks[0], chunks[1]
	assert.Equal(t, pcommon.TraceID{1}, one.id, "chunks in order of first appearance")
	assert.Equal(t, 3, one.items)
	assert.Equal(t, []byte{1, 3, 4}, spanIDs(one.td))
	require.Equal(t, 1, one.td.ResourceSpans().Len(), "one resource copied once")
	require.Equal(t, 2, one.td.ResourceSpans().At(0).ScopeSpans().Len(), "one scope per source scope")
	assert.Equal(t, "s2", one.td.ResourceSpans().At(0).ScopeSpans().At(1).Scope().Name())

	assert.Equal(t, pcommon.TraceID{2}, two.id)
	assert.Equal(t, []byte{2, 5}, spanIDs(two.td))
	require.Equal(t, 2, two.td.ResourceSpans().Len())
	name, _ := two.td.ResourceSpans().At(1).Resource().Attributes().Get("service.name")
	assert.Equal(t, "b", name.Str())
}

func TestSplitTracesOfEmptyInput(t *testing.T) {
	assert.Empty(t, splitTraces(ptrace.NewTraces()))
}

func genAILogs() plog.Logs {
	ld := plog.NewLogs()
	sl := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty()
	add := func(trace byte, event string) {
		lr := sl.LogRecords().AppendEmpty()
		lr.SetTraceID(pcommon.TraceID{trace})
		lr.SetEventName(event)
	}
	add(1, "gen_ai.user.message")
	add(0, "gen_ai.user.message") // no trace id: not joinable
	add(1, "app.startup")         // not a GenAI event
	add(2, "gen_ai.choice")
	add(1, "gen_ai.choice")
	return ld
}

func TestSplitLogsTakesGenAIEventsWithATraceID(t *testing.T) {
	ld := genAILogs()
	chunks := splitLogs(ld, false)
	require.Len(t, chunks, 2)
	assert.Equal(t, pcommon.TraceID{1}, chunks[0].id)
	assert.Equal(t, 2, chunks[0].items)
	assert.Equal(t, 2, chunks[0].ld.LogRecordCount())
	assert.Equal(t, pcommon.TraceID{2}, chunks[1].id)
	assert.Equal(t, 1, chunks[1].items)
	assert.Equal(t, 2, ld.LogRecordCount(), "what is left is for the next logs consumer")
	sl := ld.ResourceLogs().At(0).ScopeLogs().At(0)
	assert.True(t, sl.LogRecords().At(0).TraceID().IsEmpty())
	assert.Equal(t, "app.startup", sl.LogRecords().At(1).EventName())
}

func TestSplitLogsKeepCopiesAndLeavesTheInput(t *testing.T) {
	ld := genAILogs()
	chunks := splitLogs(ld, true)
	require.Len(t, chunks, 2)
	assert.Equal(t, 5, ld.LogRecordCount())
}

func TestSplitLogsDropsEmptiedContainers(t *testing.T) {
	ld := plog.NewLogs()
	lr := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	lr.SetTraceID(pcommon.TraceID{7})
	lr.SetEventName("gen_ai.system.message")
	require.Len(t, splitLogs(ld, false), 1)
	assert.Zero(t, ld.ResourceLogs().Len(), "no empty resource is passed on")
}

func TestRecentTracesForgetsTheOldest(t *testing.T) {
	r := newRecentTraces(2, 1<<20, idsTelemetry{})
	r.add(pcommon.TraceID{1}, nil, nil)
	r.add(pcommon.TraceID{2}, nil, nil)
	r.add(pcommon.TraceID{1}, nil, nil) // closed twice (a late fragment): replaces its own older entry
	assert.Equal(t, 1, r.count(pcommon.TraceID{1}))
	assert.Equal(t, 1, r.count(pcommon.TraceID{2}))
	r.add(pcommon.TraceID{3}, nil, nil)
	assert.Zero(t, r.count(pcommon.TraceID{2}), "the oldest entry is forgotten")
	assert.Equal(t, 1, r.count(pcommon.TraceID{1}))
	r.add(pcommon.TraceID{4}, nil, nil)
	assert.Zero(t, r.count(pcommon.TraceID{1}))
	assert.Equal(t, 1, r.count(pcommon.TraceID{4}))
}
