package replaycaseprocessor

import (
	"context"

	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// A permanent refusal of a batch says that retrying the same request cannot help, not that every
// case in it is bad: one case the next consumer cannot take (an OTLP exporter's 400, a 413 for
// a request of emit_batch_size cases) refused the whole request, and every case of the batch
// was dropped with it. So a batch of several cases refused for good is sent again one case (or
// run passed on) at a time, and only what is refused alone is dropped, counted and logged.

// batchItem is one case, or one run passed on unchanged, in a batch's traces: the next
// resources ResourceSpans of it, in the order they were added.
type batchItem struct {
	caseID    string      // a case
	closed    *closedCase // what cases_closed counts of it once taken (case_closed_count.go)
	traceID   string      // the run's trace id: of a case, or of a run passed on unchanged
	resources int
}

// sendEachAlone sends the items of b, whose traces the next consumer refused for good, one at
// a time. What is refused for good alone is dropped, counted and logged. A retryable refusal
// stops it: b keeps the items not sent yet (caseIDs and passed too) and the error is returned,
// so that b is kept and sent again; the items sent before it are not sent twice. It returns nil
// once every item has been sent or dropped.
func (p *caseProcessor) sendEachAlone(ctx context.Context, b *batch) error {
	parts := make([]ptrace.Traces, len(b.items))
	rss := b.traces.ResourceSpans()
	at := 0
	for i, item := range b.items {
		parts[i] = ptrace.NewTraces()
		for range item.resources {
			rss.At(at).MoveTo(parts[i].ResourceSpans().AppendEmpty())
			at++
		}
	}
	for i, item := range b.items {
		if parts[i].SpanCount() == 0 {
			continue
		}
		err := p.nextTraces.ConsumeTraces(ctx, parts[i])
		switch {
		case err == nil:
			p.recordTaken(ctx, b.items[i:i+1])
		case consumererror.IsPermanent(err):
			one := &batch{}
			if item.caseID != "" {
				one.caseIDs, one.traceOf = []string{item.caseID}, []string{item.traceID}
			} else {
				one.passed = []string{item.traceID}
			}
			p.dropCases(ctx, one, "permanent_downstream_error", err)
		default:
			b.keepFrom(i, parts)
			return err
		}
	}
	b.traces = ptrace.NewTraces()
	return nil
}

// keepFrom makes b hold items i and after, whose traces are parts[i:].
func (b *batch) keepFrom(i int, parts []ptrace.Traces) {
	b.traces = ptrace.NewTraces()
	b.items = b.items[i:]
	b.caseIDs, b.traceOf, b.passed = nil, nil, nil
	for j, item := range b.items {
		parts[i+j].ResourceSpans().MoveAndAppendTo(b.traces.ResourceSpans())
		if item.caseID != "" {
			b.caseIDs = append(b.caseIDs, item.caseID)
			b.traceOf = append(b.traceOf, item.traceID)
		} else {
			b.passed = append(b.passed, item.traceID)
		}
	}
}
