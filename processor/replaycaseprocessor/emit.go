package replaycaseprocessor

import (
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/client"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/reprise-dev/reprise/replaycase"
)

// batch is closed cases built for the next consumer, kept until it takes them: the canonical
// case spans and the unchanged traces without GenAI telemetry for the traces pipeline, and the
// events of those traces for the logs pipeline.
type batch struct {
	traces  ptrace.Traces
	logs    plog.Logs
	caseIDs []string
	traceOf []string     // the trace id of each case of caseIDs, for the line of a drop
	passed  []string     // trace ids of the runs that are no case, passed on unchanged in traces and logs
	bytes   int64        // heap of the closed buffers (their pdata estimate), released once sent
	walKeys []string     // write-ahead records to release once sent
	closed  []closedRun  // traces whose cases the batch holds, marked closed once sent (closed_marks.go)
	handoff []string     // the hand-off marks stored before it was offered, deleted once sent (handoff_marks.go)
	markers []*walMarker // resume marks to store once sent (span_limit_resume.go)
	items   []batchItem  // what traces holds, in order (emit_isolate.go); nil once the next consumer took it
}

// admit refuses new data while closed cases wait for the next consumer, or while the memory
// held is over limits.max_buffered_bytes although no open case is left to close. It first tries
// to send what waits, unless another caller is already doing so.
func (p *caseProcessor) admit(ctx context.Context) error {
	if !p.backlogged() {
		return nil
	}
	if p.emitMu.TryLock() {
		_ = p.drainLocked(ctx)
		p.emitMu.Unlock()
	}
	if p.backlogged() {
		return errBackpressure
	}
	return nil
}

func (p *caseProcessor) backlogged() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.pending) > 0 || p.withIDs(p.bytes, p.cfg.Limits.MaxBufferedBytes) > p.cfg.Limits.MaxBufferedBytes
}

// drainIfDue sends the closed cases when a batch is full or memory is over the limit. A refusal
// keeps them (pending) and is not the caller's error: the caller's data was accepted.
func (p *caseProcessor) drainIfDue(ctx context.Context) {
	p.mu.Lock()
	due := len(p.outbox) >= p.cfg.EmitBatchSize || p.withIDs(p.bytes, p.cfg.Limits.MaxBufferedBytes) > p.cfg.Limits.MaxBufferedBytes
	p.mu.Unlock()
	if due {
		_ = p.drain(ctx)
	}
}

func (p *caseProcessor) drain(ctx context.Context) error {
	p.emitMu.Lock()
	defer p.emitMu.Unlock()
	return p.drainLocked(ctx)
}

// drainLocked resends refused batches, oldest first, then builds and sends the outbox in
// batches of emit_batch_size cases. It stops at the first retryable refusal, keeping the
// refused batch and everything after it. Caller holds emitMu.
//
// ctx is often the context of a request that happened to close cases (a limit, a due batch):
// the cases are not that request's, so they are sent without its client metadata and auth,
// which a headers_setter extension or an exporter batching by metadata_keys would put on them.
// Its deadline and cancellation are kept.
func (p *caseProcessor) drainLocked(ctx context.Context) error {
	ctx = client.NewContext(ctx, client.Info{})
	for {
		p.mu.Lock()
		if len(p.pending) == 0 {
			p.mu.Unlock()
			break
		}
		b := p.pending[0]
		p.mu.Unlock()
		if err := p.offer(ctx, b); err != nil {
			return err
		}
		p.mu.Lock()
		if len(p.pending) > 0 && p.pending[0] == b { // abandonAtDeadline may have emptied it
			p.pending = p.pending[1:]
		}
		p.mu.Unlock()
	}
	for {
		p.mu.Lock()
		n := min(len(p.outbox), p.cfg.EmitBatchSize)
		if n == 0 {
			p.mu.Unlock()
			return nil
		}
		due := append([]closing(nil), p.outbox[:n]...)
		p.outbox = append(p.outbox[:0:0], p.outbox[n:]...)
		p.mu.Unlock()
		b, rest := p.build(ctx, due)
		if len(rest) > 0 {
			p.mu.Lock()
			p.outbox = append(append([]closing(nil), rest...), p.outbox...)
			p.mu.Unlock()
		}
		if err := p.offer(ctx, b); err != nil {
			p.mu.Lock()
			p.pending = append(p.pending, b)
			p.mu.Unlock()
			p.telemetry.ProcessorReplayCaseEmitFailures.Add(ctx, int64(len(b.caseIDs)))
			p.logger.Error("the next consumer refused closed cases; they are kept and sent again, and new data is refused until then",
				zap.Strings("case_ids", b.caseIDs), zap.Error(err))
			return err
		}
	}
}

// send hands a batch to the next consumers. Once sent, or refused for good (a permanent error:
// sending again cannot help; the cases are dropped, counted and logged), its memory and
// write-ahead records are released.
func (p *caseProcessor) send(ctx context.Context, b *batch) error {
	if b.traces.SpanCount() > 0 {
		err := p.nextTraces.ConsumeTraces(ctx, b.traces)
		if err == nil {
			p.recordTaken(ctx, b.items)
		}
		if err != nil && consumererror.IsPermanent(err) && len(b.items) > 1 {
			err = p.sendEachAlone(ctx, b) // one bad case must not lose the batch
		}
		if err != nil {
			if consumererror.IsPermanent(err) {
				p.dropCases(ctx, b, "permanent_downstream_error", err)
				p.release(ctx, b)
			}
			return err
		}
		b.traces, b.items = ptrace.NewTraces(), nil // counted: a logs retry must not count them again
	}
	if b.logs.LogRecordCount() > 0 && p.nextLogs != nil {
		if err := p.nextLogs.ConsumeLogs(ctx, b.logs); err != nil {
			if !consumererror.IsPermanent(err) {
				return err
			}
			p.dropPassedEvents(ctx, b, "permanent_downstream_error", err)
		}
		b.logs = plog.NewLogs()
	}
	p.release(ctx, b)
	return nil
}

// release forgets a batch that left the processor. The buffered_bytes metric falls only once
// the batch's write-ahead records are deleted, so that 0 means nothing of it would be sent again
// after a restart.
func (p *caseProcessor) release(ctx context.Context, b *batch) {
	p.mu.Lock()
	p.bytes -= b.bytes
	p.mu.Unlock()
	p.wal.release(ctx, b.walKeys, b.closed, b.handoff, b.markers...)
	p.telemetry.ProcessorReplayCaseBufferedBytes.Add(ctx, -b.bytes)
	b.bytes, b.walKeys, b.closed, b.handoff, b.markers = 0, nil, nil, nil, nil
}

// dropCases counts and logs, one line per case (with its case id and its run's trace id) or run
// passed on unchanged (its trace id) and without sampling, the cases of a batch and the runs
// passed on unchanged with them, which will not reach the next consumer.
func (p *caseProcessor) dropCases(ctx context.Context, b *batch, reason string, err error) {
	attrs := metric.WithAttributes(attribute.String("reason", reason))
	if len(b.caseIDs) > 0 {
		p.telemetry.ProcessorReplayCaseDroppedCases.Add(ctx, int64(len(b.caseIDs)), attrs)
	}
	for i, id := range b.caseIDs {
		p.dropLog.Error("replay case dropped", zap.String("case_id", id), zap.String("trace_id", b.traceOf[i]),
			zap.String("reason", reason), zap.Error(err))
	}
	if len(b.passed) > 0 {
		p.telemetry.ProcessorReplayCaseDroppedPassthroughTraces.Add(ctx, int64(len(b.passed)), attrs)
	}
	for _, id := range b.passed {
		p.dropLog.Error("run passed on unchanged dropped", zap.String("trace_id", id), zap.String("reason", reason), zap.Error(err))
	}
}

// dropPassedEvents counts and logs the log events of the batch's pass-through runs that the
// next logs consumer did not take (refused for good, or still refused at shutdown): their spans
// went on, so the batch is not kept for them.
func (p *caseProcessor) dropPassedEvents(ctx context.Context, b *batch, reason string, err error) {
	p.telemetry.ProcessorReplayCaseDroppedEvents.Add(ctx, int64(b.logs.LogRecordCount()), metric.WithAttributes(attribute.String("reason", reason)))
	p.dropLog.Error("log events of runs passed on unchanged dropped", zap.Strings("trace_ids", b.passed),
		zap.Int("events", b.logs.LogRecordCount()), zap.String("reason", reason), zap.Error(err))
}

// build turns closed buffers into a batch: each case in the canonical form, each trace without
// GenAI telemetry unchanged, and that trace's events for the logs pipeline. A buffer is decoded
// only when its case is built, so closed cases waiting in the outbox stay protobuf. Decoding
// makes a case several times larger, so build stops after the case that takes the memory held
// past limits.max_buffered_bytes plus buildHeadroom of it, and returns the closings it did not
// build (rest). The headroom keeps batches whole while memory sits at the limit (an overload
// keeps it there): stopping at the limit itself would send those cases one by one, a request
// and an exporter write each, and slow the drain exactly when it has the most to do.
//
// A case closed at limits.max_spans_per_trace also ends its batch: the parts of a trace cut
// there close together (one request can fill several), and built into one batch they were
// the whole trace decoded at once, while the next consumer decoded and wrote it again (one
// trace of 100,000 spans took the collector to 754-975 MiB of RSS with GOMEMLIMIT=192MiB,
// scripts/big-trace-memory.sh). One part at a time, a batch holds at most one such part beside
// the cases closed before it (TestPartsOfACutTraceAreSentOneAtATime).
func (p *caseProcessor) build(ctx context.Context, due []closing) (b *batch, rest []closing) {
	b = &batch{traces: ptrace.NewTraces(), logs: plog.NewLogs()}
	for i, cl := range due {
		p.addToBatch(ctx, cl, b)
		if i+1 < len(due) && (cl.cause == replaycase.ClosedSpanLimit || p.overBuildLimit()) {
			return b, due[i+1:]
		}
	}
	return b, nil
}

// buildHeadroom is the share of limits.max_buffered_bytes that cases being built may take
// beyond it: a quarter.
const buildHeadroom = 4

func (p *caseProcessor) overBuildLimit() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	limit := p.cfg.Limits.MaxBufferedBytes + p.cfg.Limits.MaxBufferedBytes/buildHeadroom
	return p.withIDs(p.bytes, limit) > limit
}

// addToBatch builds one closed buffer into b, and records what it added to b.traces.
func (p *caseProcessor) addToBatch(ctx context.Context, cl closing, b *batch) {
	resources, cases, passed := b.traces.ResourceSpans().Len(), len(b.caseIDs), len(b.passed)
	closed := p.addRun(ctx, cl, b)
	item := batchItem{resources: b.traces.ResourceSpans().Len() - resources}
	switch {
	case len(b.caseIDs) > cases:
		item.caseID, item.traceID, item.closed = b.caseIDs[cases], b.traceOf[cases], closed
	case len(b.passed) > passed:
		item.traceID = b.passed[passed]
	default:
		return // dropped, or not selected
	}
	b.items = append(b.items, item)
}

// addRun builds one closed buffer into b. It returns what the cases_closed metric counts of
// the case it added, once the next consumer takes it (recordTaken), or nil when it added none.
func (p *caseProcessor) addRun(ctx context.Context, cl closing, b *batch) *closedCase {
	run, ok := p.materialize(ctx, cl)
	b.bytes += cl.buf.bytes
	b.walKeys = append(b.walKeys, cl.buf.walKeys...)
	closedAt := -1
	if p.wal != nil && !cl.buf.id.IsEmpty() { // every buffer take closed: what recentTraces remembers
		closedAt = len(b.closed)
		b.closed = append(b.closed, closedRun{id: cl.buf.id, spans: cl.spans, events: cl.events,
			cause: cl.cause, detail: cl.detail, fragment: cl.buf.fragment, spanLimitPart: cl.buf.spanLimitPart,
			droppedEvents: cl.buf.droppedEvents, handedOff: cl.buf.handoffKey != ""})
	}
	if m := cl.buf.marker; m != nil {
		b.markers = append(b.markers, m)
	}
	if !ok {
		return nil
	}
	if closedAt >= 0 {
		b.closed[closedAt].noIDSpans = spansWithoutID(run.spans)
	}
	c, outcome := p.buildCase(ctx, cl, run)
	if m := cl.buf.marker; m != nil && outcome == runCase {
		m.selectedBy = c.SelectedBy
	}
	if closedAt >= 0 && outcome == runCase {
		b.closed[closedAt].selectedBy = c.SelectedBy
	}
	switch outcome {
	case runUnselected:
		p.unselected(ctx, cl, run, b)
		return nil
	case runNotGenAI:
		p.telemetry.ProcessorReplayCasePassthroughTraces.Add(ctx, 1)
		run.spans.ResourceSpans().MoveAndAppendTo(b.traces.ResourceSpans())
		run.events.ResourceLogs().MoveAndAppendTo(b.logs.ResourceLogs())
		b.passed = append(b.passed, traceIDText(cl.buf.id))
		return nil
	case runCase:
	}
	// Encoded apart and moved into the batch only when whole: Encode fails part way (a step
	// whose span id is not 8 bytes; buildCase gives a span sent without one a substitute and
	// quarantines the run, so this is a defect), and what it wrote until then is a case span
	// with some of its steps, which the exporter would write as a row.
	enc := ptrace.NewTraces()
	if err := replaycase.Encode(c, enc); err != nil {
		p.telemetry.ProcessorReplayCaseDroppedCases.Add(ctx, 1, metric.WithAttributes(attribute.String("reason", "encode_error")))
		p.dropLog.Error("replay case dropped", zap.String("case_id", c.CaseID), zap.String("trace_id", c.Provenance.TraceID),
			zap.String("reason", "encode_error"), zap.Error(err))
		return nil
	}
	enc.ResourceSpans().MoveAndAppendTo(b.traces.ResourceSpans())
	b.caseIDs = append(b.caseIDs, c.CaseID)
	b.traceOf = append(b.traceOf, c.Provenance.TraceID)
	return &closedCase{status: c.Status, closedBy: c.ClosedBy, reasons: reasonCodesOf(c)}
}

// flushRetry is how long Shutdown keeps offering closed cases to a next consumer that refuses
// them (an exporter whose queue is full drains it meanwhile).
const flushRetry = 5 * time.Second

// drainAtShutdown sends everything, retrying refusals for up to p.flushRetry. What is still
// refused then is kept in the write-ahead storage when there is one (restored and sent on the
// next start) and otherwise dropped, counted and logged with its case ids.
func (p *caseProcessor) drainAtShutdown(ctx context.Context) error {
	deadline := time.Now().Add(p.flushRetry)
	for {
		err := p.drain(ctx)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			if p.wal != nil {
				p.logger.Warn("closed cases the next consumer refused stay in storage; they are sent on the next start", zap.Error(err))
				return err
			}
			p.mu.Lock()
			left, rest := p.pending, p.outbox
			p.pending, p.outbox = nil, nil
			p.mu.Unlock()
			p.dropUndeliverable(ctx, left, rest, err)
			return fmt.Errorf("replay_case: closed cases undeliverable at shutdown: %w", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
