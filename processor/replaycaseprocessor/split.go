package replaycaseprocessor

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/internal/pdatawalk"
	"github.com/reprise-dev/reprise/normalize"
)

// chunkMeta is what a traceChunk and a logChunk hold besides their telemetry.
type chunkMeta struct {
	id        pcommon.TraceID
	repaired  int      // strings repaired to valid UTF-8 (sanitize.go)
	walKeys   []string // write-ahead records of this chunk (wal.go)
	fromKafka bool     // consumed from Kafka (split_trace.go)
	// stored is the chunk's encoding as its write-ahead record holds it (held.go's format),
	// while the chunk is unchanged since: buffering holds it instead of encoding the chunk
	// again. Whatever changes the chunk (sanitizing, de-duplication, a split at the span limit)
	// sets it to nil.
	stored []byte
	// redundant: buffering took nothing from the chunk (all duplicates, or events past the
	// limit), so its write-ahead record is deleted at once instead of held (redundantKeys).
	redundant bool
	// masked: the chunk may hold placeholders the case must count (scrub_intake.go).
	masked bool
	// restored: replayed from the write-ahead records at start (wal.go restore), so possibly in
	// a case the next consumer wrote before the process stopped (traceBuffer.live).
	restored bool
}

func (m *chunkMeta) meta() *chunkMeta { return m }

// traceChunk is the part of one incoming batch that belongs to one trace.
type traceChunk struct {
	chunkMeta
	td    ptrace.Traces
	items int

	rsIdx, ssIdx int // source resource/scope the current destination copies
	rs           ptrace.ResourceSpans
	ss           ptrace.ScopeSpans
}

// splitTraces moves the spans of td into one chunk per trace, in order of first appearance.
// Resource and scope are copied once per chunk and source scope.
func splitTraces(td ptrace.Traces) []*traceChunk {
	byID := map[pcommon.TraceID]*traceChunk{}
	var out []*traceChunk
	for r := range pdatawalk.Spans(td) {
		sp := r.Span
		c, ok := byID[sp.TraceID()]
		if !ok {
			c = &traceChunk{chunkMeta: chunkMeta{id: sp.TraceID()}, td: ptrace.NewTraces(), rsIdx: -1}
			byID[c.id] = c
			out = append(out, c)
		}
		if c.rsIdx != r.ResourceIndex {
			c.rs = c.td.ResourceSpans().AppendEmpty()
			r.Resource.Resource().CopyTo(c.rs.Resource())
			c.rs.SetSchemaUrl(r.Resource.SchemaUrl())
			c.rsIdx, c.ssIdx = r.ResourceIndex, -1
		}
		if c.ssIdx != r.ScopeIndex {
			c.ss = c.rs.ScopeSpans().AppendEmpty()
			r.Scope.Scope().CopyTo(c.ss.Scope())
			c.ss.SetSchemaUrl(r.Scope.SchemaUrl())
			c.ssIdx = r.ScopeIndex
		}
		c.items++
		sp.MoveTo(c.ss.Spans().AppendEmpty())
	}
	return out
}

// logChunk is the GenAI log events of one batch that belong to one trace.
type logChunk struct {
	chunkMeta
	logsAppender
	items int
}

// logsAppender builds a Logs from records walked in order (pdatawalk), each appended under a
// copy of its resource and scope, one per run of records that share them.
type logsAppender struct {
	ld           plog.Logs
	rlIdx, slIdx int
	rl           plog.ResourceLogs
	sl           plog.ScopeLogs
}

func newLogsAppender() logsAppender { return logsAppender{ld: plog.NewLogs(), rlIdx: -1} }

// next appends an empty record under r's resource and scope, for r to be copied or moved to.
func (a *logsAppender) next(r pdatawalk.LogRecord) plog.LogRecord {
	if a.rlIdx != r.ResourceIndex {
		a.rl = a.ld.ResourceLogs().AppendEmpty()
		r.Resource.Resource().CopyTo(a.rl.Resource())
		a.rl.SetSchemaUrl(r.Resource.SchemaUrl())
		a.rlIdx, a.slIdx = r.ResourceIndex, -1
	}
	if a.slIdx != r.ScopeIndex {
		a.sl = a.rl.ScopeLogs().AppendEmpty()
		r.Scope.Scope().CopyTo(a.sl.Scope())
		a.sl.SetSchemaUrl(r.Scope.SchemaUrl())
		a.slIdx = r.ScopeIndex
	}
	return a.sl.LogRecords().AppendEmpty()
}

// splitLogs takes the GenAI events that carry a trace id out of ld (or copies them, when keep
// is set) into one chunk per trace. What stays in ld is for the next logs consumer.
func splitLogs(ld plog.Logs, keep bool) []*logChunk {
	byID := map[pcommon.TraceID]*logChunk{}
	var out []*logChunk
	pdatawalk.RemoveLogRecordsIf(ld, func(r pdatawalk.LogRecord) bool {
		lr := r.Record
		if lr.TraceID().IsEmpty() || !normalize.IsGenAIEvent(lr) {
			return false
		}
		c, ok := byID[lr.TraceID()]
		if !ok {
			c = &logChunk{chunkMeta: chunkMeta{id: lr.TraceID()}, logsAppender: newLogsAppender()}
			byID[c.id] = c
			out = append(out, c)
		}
		c.items++
		if keep { // the record also stays for the next logs consumer
			lr.CopyTo(c.next(r))
			return false
		}
		lr.MoveTo(c.next(r))
		return true
	})
	return out
}

// takeSpans moves the first n spans of td into a new Traces, keeping their resource and scope.
func takeSpans(td ptrace.Traces, n int) ptrace.Traces {
	return takeSpansIf(td, func(ptrace.Span) bool {
		if n == 0 {
			return false
		}
		n--
		return true
	})
}

// takeSpansIf moves the spans of td that take accepts, in order, into a new Traces, keeping
// their resource and scope; td keeps the others, without the scopes and resources left empty.
func takeSpansIf(td ptrace.Traces, take func(ptrace.Span) bool) ptrace.Traces {
	out := ptrace.NewTraces()
	for i := 0; i < td.ResourceSpans().Len(); i++ {
		rs := td.ResourceSpans().At(i)
		drs, hasResource := ptrace.ResourceSpans{}, false
		for j := 0; j < rs.ScopeSpans().Len(); j++ {
			ss := rs.ScopeSpans().At(j)
			dss, hasScope := ptrace.ScopeSpans{}, false
			ss.Spans().RemoveIf(func(sp ptrace.Span) bool {
				if !take(sp) {
					return false
				}
				if !hasResource {
					drs, hasResource = out.ResourceSpans().AppendEmpty(), true
					rs.Resource().CopyTo(drs.Resource())
					drs.SetSchemaUrl(rs.SchemaUrl())
				}
				if !hasScope {
					dss, hasScope = drs.ScopeSpans().AppendEmpty(), true
					ss.Scope().CopyTo(dss.Scope())
					dss.SetSchemaUrl(ss.SchemaUrl())
				}
				sp.MoveTo(dss.Spans().AppendEmpty())
				return true
			})
		}
		rs.ScopeSpans().RemoveIf(func(ss ptrace.ScopeSpans) bool { return ss.Spans().Len() == 0 })
	}
	td.ResourceSpans().RemoveIf(func(rs ptrace.ResourceSpans) bool { return rs.ScopeSpans().Len() == 0 })
	return out
}

func forEachScopeSpans(td ptrace.Traces, fn func(ptrace.ScopeSpans)) {
	for i := 0; i < td.ResourceSpans().Len(); i++ {
		for j := 0; j < td.ResourceSpans().At(i).ScopeSpans().Len(); j++ {
			fn(td.ResourceSpans().At(i).ScopeSpans().At(j))
		}
	}
}
