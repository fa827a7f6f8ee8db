package replaycaseprocessor

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/reprise-dev/reprise/normalize"
	"github.com/reprise-dev/reprise/replaycase"
	"github.com/reprise-dev/reprise/scrub"
)

// zeroTraceID is the trace id written for spans that came without one (encoded as 32 zeros).
const zeroTraceID = "00000000000000000000000000000000"

// traceIDText is id in hex for a log line: zeroTraceID, as its case's trace_id, for spans that
// came without one (pdata gives "" for it, which names nothing to grep for).
func traceIDText(id pcommon.TraceID) string {
	if id.IsEmpty() {
		return zeroTraceID
	}
	return id.String()
}

// runOutcome is what became of a closed trace.
type runOutcome int

const (
	runCase       runOutcome = iota // a case, accepted or quarantined
	runNotGenAI                     // no GenAI telemetry: passed on unchanged
	runUnselected                   // a GenAI run the select rules and sample did not keep
)

// buildCase assembles, selects and judges one case. The case is nil unless the outcome is
// runCase.
func (p *caseProcessor) buildCase(ctx context.Context, cl closing, run runTelemetry) (*replaycase.Case, runOutcome) {
	b := cl.buf
	// The telemetry was scrubbed as it arrived (scrub_intake.go): the case, its raw spans and a
	// trace passed on unchanged all come from the scrubbed copy, and its placeholders are what
	// the case counts as masked.
	var scrubbed scrub.Report
	if b.masked {
		p.scrubber.CountTraces(run.spans, &scrubbed)
		p.scrubber.CountLogs(run.events, &scrubbed)
	}
	c, findings, genAI := normalize.Build(run.spans, run.events)
	if !genAI && !eventsOfASplit(b) {
		return nil, runNotGenAI
	}
	// Selected once per closed trace, before the verdict: a selected run is still quarantined
	// when its evidence fails.
	by, selected := p.selectRun(ctx, b, run, cl.cause)
	if !selected {
		return nil, runUnselected
	}
	c.SelectedBy = by
	c.ClosedBy = cl.cause
	c.Resent = !b.live // restored records alone: the exporter may have written it before a crash
	c.Scrub = replaycase.ScrubReport{PolicyHash: p.scrubber.PolicyHash(), Counts: scrubbed.Counts}
	for _, kind := range scrubbed.Quarantine {
		c.Quarantine(replaycase.ReasonSecretDetected, fmt.Sprintf("found %s (scrub action: quarantine); it is masked in everything written", kind), "")
	}
	for _, f := range findings {
		if p.required[f.Code] {
			c.Quarantine(f.Code, f.Detail, f.SpanID)
		}
	}
	hasRoot := c.Provenance.RootSpanID != ""
	switch {
	case cl.cause == replaycase.ClosedEvicted:
		c.Quarantine(replaycase.ReasonEvicted, cl.detail, "")
	case cl.cause == replaycase.ClosedSpanLimit:
		c.Quarantine(replaycase.ReasonSpanLimit, cl.detail, "")
	case cl.cause == replaycase.ClosedShutdown && !hasRoot:
		c.Quarantine(replaycase.ReasonShutdown, "flushed at shutdown before the root span arrived", "")
	case cl.cause == replaycase.ClosedMaxAge && !hasRoot:
		c.Quarantine(replaycase.ReasonMaxAge, cl.detail, "")
	}
	if b.fragment > 0 {
		// A fragment must never take the id of the case closed before it (the same spans sent
		// again after the case closed would otherwise give a second row under that id).
		c.CaseID = replaycase.ID(c.Provenance.TraceID, fmt.Sprintf("fragment/%d/%s", b.fragment, c.CaseID))
		c.Quarantine(replaycase.ReasonLateSpans, fmt.Sprintf("spans or events arrived after this trace's case was closed; this is fragment %d", b.fragment), "")
	}
	p.markSplit(ctx, c, cl, run)
	if cl.cause == replaycase.ClosedInvalidTraceID {
		c.Provenance.TraceID = zeroTraceID
		// Without a trace id, span ids alone do not tell runs apart (an SDK that writes zero
		// ids writes the same span ids too): the id also says what the request held, so two
		// different requests never share a case_id, and the same request sent again keeps it.
		c.CaseID = replaycase.ID(zeroTraceID, "invalid_trace_id/"+c.CaseID+"/"+contentDigest(run.spans))
		c.Quarantine(replaycase.ReasonInvalidTraceID, "the spans have an all-zero trace id, so they cannot be grouped into runs; this case holds the ones of one request", "")
	}
	if b.repaired > 0 {
		c.Quarantine(replaycase.ReasonInvalidUTF8, fmt.Sprintf("%d strings were not valid UTF-8; invalid bytes were replaced with U+FFFD", b.repaired), "")
	}
	if b.droppedEvents > 0 {
		c.Quarantine(replaycase.ReasonEventLimit, fmt.Sprintf("%d GenAI log events past limits.max_events_per_trace (%d) were dropped", b.droppedEvents, p.cfg.Limits.MaxEventsPerTrace), "")
	}
	if b.reusedSpanIDs > 0 {
		c.Quarantine(replaycase.ReasonSpanIDReused, fmt.Sprintf("%d spans reused the span id of a different span of this trace and were dropped (logged with their span ids)", b.reusedSpanIDs), "")
	}
	p.pricer.apply(ctx, c, run.spans)
	c.Metadata = p.metadata.eval(ctx, run.spans, c.Provenance.RootSpanID)
	c.Assertions = p.assertions.eval(ctx, run.spans, c.Provenance.RootSpanID)
	quarantineMissingSpanIDs(c, run.spans) // after everything that reads the steps' own span ids
	if p.cfg.RawSpans == rawAll || (p.cfg.RawSpans == rawQuarantined && c.Status == replaycase.StatusQuarantined) {
		var part string
		var err error
		if c.RawSpans, c.RawEvents, part, err = rawTelemetry(run); err != nil {
			p.telemetry.ProcessorReplayCaseDroppedRawTelemetry.Add(ctx, 1, metric.WithAttributes(attribute.String("part", part)))
			p.dropLog.Error("raw telemetry of a case dropped: it could not be encoded", zap.String("case_id", c.CaseID), zap.String("part", part), zap.Error(err))
		}
	}
	return c, runCase
}

// rawTracesMarshaler and rawLogsMarshaler encode a case's raw telemetry (variables so that a
// test can make them fail).
var (
	rawTracesMarshaler ptrace.Marshaler = &ptrace.ProtoMarshaler{}
	rawLogsMarshaler   plog.Marshaler   = &plog.ProtoMarshaler{}
)

// rawTelemetry is the OTLP protobuf of the run's spans and of its joined log events. When a
// part cannot be encoded it returns neither (spans without their events would re-drive as a
// different run) and names the part that failed.
func rawTelemetry(run runTelemetry) (spans, events []byte, failedPart string, err error) {
	if spans, err = rawTracesMarshaler.MarshalTraces(run.spans); err != nil {
		return nil, nil, "spans", err
	}
	if run.events.LogRecordCount() > 0 {
		if events, err = rawLogsMarshaler.MarshalLogs(run.events); err != nil {
			return nil, nil, "events", err
		}
	}
	return spans, events, "", nil
}

// contentDigest is a short hex digest of spans' protobuf encoding, or "" when they cannot be
// encoded (held telemetry was decoded from protobuf, so that does not happen).
func contentDigest(spans ptrace.Traces) string {
	enc, err := otlpTracesMarshaler.MarshalTraces(spans)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(enc)
	return hex.EncodeToString(sum[:8])
}
