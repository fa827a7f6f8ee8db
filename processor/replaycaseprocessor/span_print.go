package replaycaseprocessor

import (
	"context"
	"encoding/binary"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"
)

// spanPrint tells a client retry of a span (the same span sent again) from a different span that
// reuses its span id (a client whose id generator repeats). It is made of what a retry cannot
// change and a different span almost never shares: start and end times, parent and kind. Names
// and attributes are left out: reading them costs a hash of every span on the hot path, and
// scrubbing at intake may rewrite them. unknownPrint marks a span id remembered without its print
// (span_limit_resume.go restores ids only): a span with that id counts as a retry, as before.
type spanPrint uint64

const unknownPrint spanPrint = 0

// printOf returns sp's print; never unknownPrint.
func printOf(sp ptrace.Span) spanPrint {
	parent := sp.ParentSpanID()
	h := uint64(sp.StartTimestamp())*0x9E3779B97F4A7C15 ^
		uint64(sp.EndTimestamp())*0xC2B2AE3D27D4EB4F ^
		binary.LittleEndian.Uint64(parent[:])*0x165667B19E3779F9 ^
		uint64(sp.Kind())
	return spanPrint(h | 1)
}

// sameSpan tells whether a span with print now is the one remembered with print was.
func sameSpan(was, now spanPrint) bool { return was == unknownPrint || was == now }

// reusedSpanIDs counts and logs, with the trace and span ids, spans of trace dropped because
// another span of the trace already had their span id; verdict.go quarantines their case
// (span_id_reused). They cannot be held beside the first: steps, parents and events are joined
// by span id.
func (p *caseProcessor) reusedSpanIDs(trace pcommon.TraceID, ids []pcommon.SpanID) {
	p.telemetry.ProcessorReplayCaseDroppedSpans.Add(context.Background(), int64(len(ids)), metric.WithAttributes(attribute.String("reason", "span_id_reused")))
	for _, id := range ids {
		p.dropLog.Warn("span dropped: it reuses the span id of a different span of its trace; its case is quarantined (span_id_reused)",
			zap.String("trace_id", traceIDText(trace)), zap.String("span_id", id.String()))
	}
}
