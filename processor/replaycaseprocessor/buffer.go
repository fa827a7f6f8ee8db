package replaycaseprocessor

import (
	"container/list"
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/reprise-dev/reprise/replaycase"
)

// traceBuffer is one open case.
type traceBuffer struct {
	id        pcommon.TraceID
	spans     ptrace.Traces
	events    plog.Logs
	items     int
	bytes     int64
	firstSeen time.Time
	lastSeen  time.Time
	rootSeen  bool
	late      bool // the trace had already been closed when this fragment started
	elem      *list.Element
}

var (
	tracesSizer ptrace.ProtoMarshaler
	logsSizer   plog.ProtoMarshaler
)

// buffer returns the open buffer of a trace, opening one if needed. Caller holds mu.
func (p *caseProcessor) buffer(id pcommon.TraceID, now time.Time) *traceBuffer {
	b, ok := p.open[id]
	if !ok {
		b = &traceBuffer{id: id, spans: ptrace.NewTraces(), events: plog.NewLogs(), firstSeen: now, late: p.closed.has(id)}
		b.elem = p.order.PushBack(b)
		p.open[id] = b
		p.telemetry.ProcessorReplayCaseOpenCases.Add(context.Background(), 1)
	}
	b.lastSeen = now
	return b
}

// grow accounts for items (spans or events) of the given encoded size added to b. Caller holds mu.
func (p *caseProcessor) grow(b *traceBuffer, items int, size int64) {
	b.items += items
	b.bytes += size
	p.bytes += size
	if b.late {
		p.telemetry.ProcessorReplayCaseLateSpans.Add(context.Background(), int64(items))
	}
	p.telemetry.ProcessorReplayCaseBufferedSpans.Add(context.Background(), int64(items))
	p.telemetry.ProcessorReplayCaseBufferedBytes.Add(context.Background(), size)
}

// checkSpanLimit closes b when it holds more items than one trace may. Caller holds mu.
func (p *caseProcessor) checkSpanLimit(b *traceBuffer, due []closing) []closing {
	if b.items <= p.cfg.Limits.MaxSpansPerTrace || b.elem == nil {
		return due
	}
	p.telemetry.ProcessorReplayCaseEvictions.Add(context.Background(), 1, metric.WithAttributes(attribute.String("limit", "max_spans_per_trace")))
	return append(due, p.take(b, replaycase.ClosedSpanLimit, fmt.Sprintf("trace reached limits.max_spans_per_trace (%d)", p.cfg.Limits.MaxSpansPerTrace)))
}

// enforceLimits closes the oldest open cases until the open-trace and byte limits hold. Caller
// holds mu.
func (p *caseProcessor) enforceLimits(due []closing) []closing {
	for p.order.Len() > 0 {
		var limit string
		var value int64
		switch {
		case len(p.open) > p.cfg.Limits.MaxOpenTraces:
			limit, value = "max_open_traces", int64(p.cfg.Limits.MaxOpenTraces)
		case p.bytes > p.cfg.Limits.MaxBufferedBytes:
			limit, value = "max_buffered_bytes", p.cfg.Limits.MaxBufferedBytes
		default:
			return due
		}
		oldest := p.order.Front().Value.(*traceBuffer)
		p.telemetry.ProcessorReplayCaseEvictions.Add(context.Background(), 1, metric.WithAttributes(attribute.String("limit", limit)))
		due = append(due, p.take(oldest, replaycase.ClosedEvicted, fmt.Sprintf("closed early: limits.%s (%d) reached", limit, value)))
	}
	return due
}

// take removes b from the open set. Caller holds mu.
func (p *caseProcessor) take(b *traceBuffer, cause replaycase.CloseCause, detail string) closing {
	p.order.Remove(b.elem)
	b.elem = nil
	delete(p.open, b.id)
	p.closed.add(b.id)
	p.bytes -= b.bytes
	ctx := context.Background()
	p.telemetry.ProcessorReplayCaseOpenCases.Add(ctx, -1)
	p.telemetry.ProcessorReplayCaseBufferedSpans.Add(ctx, -int64(b.items))
	p.telemetry.ProcessorReplayCaseBufferedBytes.Add(ctx, -b.bytes)
	return closing{buf: b, cause: cause, detail: detail}
}
