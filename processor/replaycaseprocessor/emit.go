package replaycaseprocessor

import (
	"context"
	"errors"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/reprise-dev/reprise/replaycase"
)

// emit builds the cases of closed buffers and sends them on: cases (and traces without GenAI
// telemetry, unchanged) to the traces pipeline, and events of traces that were not cases to the
// logs pipeline.
func (p *caseProcessor) emit(ctx context.Context, due []closing) error {
	if len(due) == 0 {
		return nil
	}
	out := ptrace.NewTraces()
	passLogs := plog.NewLogs()
	var ids []string
	for _, cl := range due {
		c, ok := p.buildCase(ctx, cl)
		if !ok {
			p.telemetry.ProcessorReplayCasePassthroughTraces.Add(ctx, 1)
			cl.buf.spans.ResourceSpans().MoveAndAppendTo(out.ResourceSpans())
			cl.buf.events.ResourceLogs().MoveAndAppendTo(passLogs.ResourceLogs())
			continue
		}
		if err := replaycase.Encode(c, out); err != nil {
			p.logger.Error("cannot encode case", zap.String("case_id", c.CaseID), zap.Error(err))
			continue
		}
		ids = append(ids, c.CaseID)
		p.record(ctx, c)
	}
	var err error
	if out.SpanCount() > 0 {
		if err = p.nextTraces.ConsumeTraces(ctx, out); err != nil {
			p.telemetry.ProcessorReplayCaseEmitFailures.Add(ctx, int64(len(ids)))
			p.logger.Error("the next consumer refused replay cases", zap.Strings("case_ids", ids), zap.Error(err))
		}
	}
	if passLogs.LogRecordCount() > 0 && p.nextLogs != nil {
		err = errors.Join(err, p.nextLogs.ConsumeLogs(ctx, passLogs))
	}
	return err
}

// record counts a closed case by status, closing cause and reasons.
func (p *caseProcessor) record(ctx context.Context, c *replaycase.Case) {
	p.telemetry.ProcessorReplayCaseCasesClosed.Add(ctx, 1, metric.WithAttributes(
		attribute.String("status", string(c.Status)), attribute.String("closed_by", string(c.ClosedBy))))
	for _, r := range c.Reasons {
		p.telemetry.ProcessorReplayCaseQuarantineReasons.Add(ctx, 1, metric.WithAttributes(attribute.String("reason", r.Code)))
	}
}
