package replaycaseprocessor

import (
	"context"

	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.uber.org/zap"

	"github.com/reprise-dev/reprise/replaycase"
)

// abandonAtDeadline accounts for what a Shutdown past its deadline leaves behind while the
// sweep is stuck in a send that ignores its cancellation (an exporter blocked in a write). With
// storage, everything is in it and is restored on the next start. Without, the open cases and
// the closed ones not in that send would go with the process uncounted: they are dropped,
// counted and logged with reason undeliverable_at_shutdown. The batch in the send is the next
// consumer's to decide: it is logged as in flight, counted as taken if the send returns nil,
// and dropped the same way if it is refused, since nothing would send it again (abandoned).
func (p *caseProcessor) abandonAtDeadline(ctx context.Context, err error) {
	if p.wal != nil {
		return
	}
	p.mu.Lock()
	p.abandoned = true
	for e := p.order.Front(); e != nil; e = p.order.Front() {
		p.outbox = append(p.outbox, p.take(e.Value.(*traceBuffer), replaycase.ClosedShutdown, "collector shutdown"))
	}
	sending, rest, left := p.sending, p.outbox, p.pending
	p.pending, p.outbox = nil, nil
	if len(left) > 0 && left[0] == sending {
		// A resend in flight (only the oldest refused batch is resent): the send removes it
		// from pending when it returns.
		p.pending, left = left[:1], left[1:]
	}
	p.mu.Unlock()
	if sending != nil {
		p.logger.Warn("a batch was still being sent at the shutdown deadline; the next consumer decides its fate",
			zap.Strings("case_ids", sending.caseIDs), zap.Strings("passed_trace_ids", sending.passed))
	}
	p.dropUndeliverable(ctx, left, rest, err)
}

// offer sends b, known as the batch in flight meanwhile (sending). It returns the retryable
// refusal for which b is to be kept, and nil once b left the processor: taken, refused for good
// (send drops it), or refused after Shutdown abandoned the sweep, when no one would send it
// again and it is dropped here. With storage, the batch's hand-off marks are stored first
// (handoff_marks.go); a failure to store them is returned as a refusal, so the batch is kept
// and offered again.
func (p *caseProcessor) offer(ctx context.Context, b *batch) error {
	if err := p.wal.handOff(ctx, b); err != nil {
		return err
	}
	p.mu.Lock()
	p.sending = b
	p.mu.Unlock()
	err := p.send(ctx, b)
	p.mu.Lock()
	p.sending = nil
	abandoned := p.abandoned
	p.mu.Unlock()
	if err == nil || consumererror.IsPermanent(err) {
		return nil
	}
	if abandoned {
		p.dropUndeliverable(ctx, []*batch{b}, nil, err)
		return nil
	}
	return err
}

// dropUndeliverable drops, counts and logs what shutdown cannot deliver: the built batches
// and the closed cases not built yet, which are built only for their case ids, a batch at a
// time, each released before the next is decoded.
func (p *caseProcessor) dropUndeliverable(ctx context.Context, batches []*batch, closed []closing, err error) {
	drop := func(b *batch) {
		if b.items == nil && b.logs.LogRecordCount() > 0 {
			// The next consumer took its spans (send clears items then): its cases are rows,
			// and only its events are lost.
			p.dropPassedEvents(ctx, b, "undeliverable_at_shutdown", err)
		} else {
			p.dropCases(ctx, b, "undeliverable_at_shutdown", err)
		}
		p.release(ctx, b)
	}
	for _, b := range batches {
		drop(b)
	}
	for len(closed) > 0 {
		var b *batch
		b, closed = p.build(ctx, closed)
		drop(b)
	}
}
