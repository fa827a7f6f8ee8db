package replaycaseprocessor

import (
	"context"
	"fmt"

	"go.opentelemetry.io/collector/client"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/reprise-dev/reprise/internal/pdatawalk"
	"github.com/reprise-dev/reprise/replaycase"
)

// A trace consumed from Kafka reaches this collector whole only while its partition stays with
// this collector and the spans and logs groups stay aligned. A rebalance (a collector gone
// longer than session_timeout, scale-up or scale-down) moves partitions: the part of a trace
// consumed before the move is built by the old owner, the rest by the new one, and the trace
// becomes two rows with different case ids. Neither collector sees the other's part, but each
// part shows where it was cut: spans whose parent is missing, events whose span is missing, no
// span at all, or data that arrived after the trace's case had closed here. Such a case is
// quarantined with reason trace_split and counted, and the trace id is logged, so that the parts
// can be merged by provenance.trace_id (docs/scale-out.md).
//
// The check runs only on cases with data from Kafka: the kafka receiver puts the record's
// topic, partition and offset in the request's client metadata. On other input (OTLP from the
// agents themselves) a missing parent usually means a parent span that was never exported, and
// the evidence reasons (no_root_span, ...) already say what is missing.

// kafkaPartitionKey is the client-metadata key the kafka receiver sets on every record.
const kafkaPartitionKey = "kafka.partition"

// fromKafka reports whether the request came from the kafka receiver.
func fromKafka(ctx context.Context) bool {
	return len(client.FromContext(ctx).Metadata.Get(kafkaPartitionKey)) > 0
}

// Evidence that a case is one part of a split trace, in the order they are checked.
const (
	splitLate         = "late"          // data arrived after this trace's case had closed here
	splitNoSpans      = "no_spans"      // only log events: the trace's spans went elsewhere
	splitOrphanSpans  = "orphan_spans"  // spans whose parent span is not in the case
	splitOrphanEvents = "orphan_events" // events naming a span that is not in the case
)

// splitEvidence says why the buffer looks like one part of a trace split across collectors or
// restarts, or "" when it does not. Only buffers with data from Kafka are checked.
func splitEvidence(b *traceBuffer, run runTelemetry, cause replaycase.CloseCause) (evidence, detail string) {
	if !b.fromKafka || b.id.IsEmpty() || cause == replaycase.ClosedSpanLimit || b.spanLimitPart {
		// The parts of a trace cut at limits.max_spans_per_trace are the processor's own cut,
		// reported as span_limit and late_spans.
		return "", ""
	}
	if b.fragment > 0 && !b.spanLimitPart {
		return splitLate, fmt.Sprintf("spans or events arrived after this trace's case had closed on this collector (fragment %d)", b.fragment)
	}
	if b.spanCount == 0 {
		return splitNoSpans, fmt.Sprintf("%d log events arrived without any span of their trace", b.eventCount)
	}
	spans := make(map[pcommon.SpanID]struct{}, b.spanCount)
	for r := range pdatawalk.Spans(run.spans) {
		spans[r.Span.SpanID()] = struct{}{}
	}
	missing := func(id pcommon.SpanID) bool {
		_, ok := spans[id]
		return !id.IsEmpty() && !ok
	}
	missingParents := 0
	for r := range pdatawalk.Spans(run.spans) {
		if missing(r.Span.ParentSpanID()) && !pdatawalk.ParentIsRemote(r.Span) {
			missingParents++
		}
	}
	if missingParents > 0 {
		return splitOrphanSpans, fmt.Sprintf("%d of %d spans have a parent span that is not in this case", missingParents, b.spanCount)
	}
	missingSpans := 0
	for r := range pdatawalk.LogRecords(run.events) {
		if missing(r.Record.SpanID()) {
			missingSpans++
		}
	}
	if missingSpans > 0 {
		return splitOrphanEvents, fmt.Sprintf("%d of %d log events name a span that is not in this case", missingSpans, b.eventCount)
	}
	return "", ""
}

// eventsOfASplit reports whether a buffer holds GenAI log events consumed from Kafka but no
// span: the spans of its trace were consumed by another collector. Without spans the run has no
// step, so it would be passed on as telemetry without GenAI spans (and, in tier 2, discarded
// with the logs pipeline); it becomes a quarantined case instead, so that the events stay in
// the dataset beside the trace's other part.
func eventsOfASplit(b *traceBuffer) bool {
	return b.fromKafka && b.spanCount == 0 && b.eventCount > 0 && !b.id.IsEmpty()
}

// markSplit quarantines a case built from one part of a split trace with reason trace_split,
// counts it by evidence and logs its trace id, unsampled.
func (p *caseProcessor) markSplit(ctx context.Context, c *replaycase.Case, cl closing, run runTelemetry) {
	evidence, detail := splitEvidence(cl.buf, run, cl.cause)
	if evidence == "" {
		return
	}
	c.Quarantine(replaycase.ReasonTraceSplit, detail+"; the trace's other parts are rows with the same trace_id (docs/scale-out.md)", "")
	p.telemetry.ProcessorReplayCaseSplitTraces.Add(ctx, 1, metric.WithAttributes(attribute.String("evidence", evidence)))
	p.dropLog.Warn("trace split across Kafka consumers or restarts: this case holds one part of it",
		zap.String("trace_id", c.Provenance.TraceID), zap.String("case_id", c.CaseID),
		zap.String("evidence", evidence), zap.String("detail", detail))
}
