package replaycaseprocessor

import (
	"context"

	"github.com/reprise-dev/reprise/replaycase"
)

// cases_closed ("cases closed and emitted") counts a case once the next consumer has taken it,
// not when it is built: a case built and then refused for good (permanent_downstream_error) or
// undeliverable at shutdown is counted in dropped_cases instead, and in nothing else. So a run
// that became a case is counted once, either in cases_closed (by status, which is what the
// dataset's cases/ and quarantine/ rows hold) or in dropped_cases (by reason), and
// scripts/reconcile balances cases_closed by status against the rows. A case sent again after a
// retryable refusal is counted when it is finally taken, once. quarantine_reasons counts the
// reasons of the same cases at the same moment.

// closedCase is what the per-case metrics record of a case in a batch.
type closedCase struct {
	status   replaycase.Status
	closedBy replaycase.CloseCause
	reasons  []string
}

func reasonCodesOf(c *replaycase.Case) []string {
	codes := make([]string, len(c.Reasons))
	for i, r := range c.Reasons {
		codes[i] = r.Code
	}
	return codes
}

// recordTaken counts the cases among items, which the next consumer has just taken.
func (p *caseProcessor) recordTaken(ctx context.Context, items []batchItem) {
	for _, it := range items {
		if it.closed == nil {
			continue
		}
		p.telemetry.ProcessorReplayCaseCasesClosed.Add(ctx, 1, closedCaseAttrs(it.closed.status, it.closed.closedBy))
		for _, code := range it.closed.reasons {
			p.telemetry.ProcessorReplayCaseQuarantineReasons.Add(ctx, 1, reasonAttrs(code))
		}
	}
}
