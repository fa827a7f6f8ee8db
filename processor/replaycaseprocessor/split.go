package replaycaseprocessor

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/normalize"
)

// traceChunk is the part of one incoming batch that belongs to one trace.
type traceChunk struct {
	id    pcommon.TraceID
	td    ptrace.Traces
	items int
	root  bool // the chunk holds a span without a parent

	rsIdx, ssIdx int // source resource/scope the current destination copies
	rs           ptrace.ResourceSpans
	ss           ptrace.ScopeSpans
}

// splitTraces moves the spans of td into one chunk per trace, in order of first appearance.
// Resource and scope are copied once per chunk and source scope.
func splitTraces(td ptrace.Traces) []*traceChunk {
	byID := map[pcommon.TraceID]*traceChunk{}
	var out []*traceChunk
	for i := 0; i < td.ResourceSpans().Len(); i++ {
		rs := td.ResourceSpans().At(i)
		for j := 0; j < rs.ScopeSpans().Len(); j++ {
			ss := rs.ScopeSpans().At(j)
			for k := 0; k < ss.Spans().Len(); k++ {
				sp := ss.Spans().At(k)
				c, ok := byID[sp.TraceID()]
				if !ok {
					c = &traceChunk{id: sp.TraceID(), td: ptrace.NewTraces(), rsIdx: -1}
					byID[c.id] = c
					out = append(out, c)
				}
				if c.rsIdx != i {
					c.rs = c.td.ResourceSpans().AppendEmpty()
					rs.Resource().CopyTo(c.rs.Resource())
					c.rs.SetSchemaUrl(rs.SchemaUrl())
					c.rsIdx, c.ssIdx = i, -1
				}
				if c.ssIdx != j {
					c.ss = c.rs.ScopeSpans().AppendEmpty()
					ss.Scope().CopyTo(c.ss.Scope())
					c.ss.SetSchemaUrl(ss.SchemaUrl())
					c.ssIdx = j
				}
				c.root = c.root || sp.ParentSpanID().IsEmpty()
				c.items++
				sp.MoveTo(c.ss.Spans().AppendEmpty())
			}
		}
	}
	return out
}

// logChunk is the GenAI log events of one batch that belong to one trace.
type logChunk struct {
	id    pcommon.TraceID
	ld    plog.Logs
	items int

	rlIdx, slIdx int
	rl           plog.ResourceLogs
	sl           plog.ScopeLogs
}

// splitLogs takes the GenAI events that carry a trace id out of ld (or copies them, when keep
// is set) into one chunk per trace. What stays in ld is for the next logs consumer.
func splitLogs(ld plog.Logs, keep bool) []*logChunk {
	byID := map[pcommon.TraceID]*logChunk{}
	var out []*logChunk
	for i := 0; i < ld.ResourceLogs().Len(); i++ {
		rl := ld.ResourceLogs().At(i)
		for j := 0; j < rl.ScopeLogs().Len(); j++ {
			sl := rl.ScopeLogs().At(j)
			sl.LogRecords().RemoveIf(func(lr plog.LogRecord) bool {
				if lr.TraceID().IsEmpty() || !normalize.IsGenAIEvent(lr) {
					return false
				}
				c, ok := byID[lr.TraceID()]
				if !ok {
					c = &logChunk{id: lr.TraceID(), ld: plog.NewLogs(), rlIdx: -1}
					byID[c.id] = c
					out = append(out, c)
				}
				if c.rlIdx != i {
					c.rl = c.ld.ResourceLogs().AppendEmpty()
					rl.Resource().CopyTo(c.rl.Resource())
					c.rlIdx, c.slIdx = i, -1
				}
				if c.slIdx != j {
					c.sl = c.rl.ScopeLogs().AppendEmpty()
					sl.Scope().CopyTo(c.sl.Scope())
					c.slIdx = j
				}
				c.items++
				lr.CopyTo(c.sl.LogRecords().AppendEmpty())
				return !keep
			})
		}
		rl.ScopeLogs().RemoveIf(func(sl plog.ScopeLogs) bool { return sl.LogRecords().Len() == 0 })
	}
	ld.ResourceLogs().RemoveIf(func(rl plog.ResourceLogs) bool { return rl.ScopeLogs().Len() == 0 })
	return out
}
