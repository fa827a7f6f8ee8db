package casediff

import (
	"fmt"
	"math"

	"github.com/reprise-dev/reprise/pricing"
	"github.com/reprise-dev/reprise/replaycase"
)

// cost reports a change of the run's cost of record (cost.total_usd) or of how it was obtained
// (cost.cost_status: a run that became unpriced or partial is worth a look even when the
// figure did not move). Differences below a millionth of a cent are float noise, not a change.
func cost(a, b *replaycase.Cost) []Finding {
	if a == nil && b == nil {
		return nil
	}
	var out []Finding
	ta, tb := total(a), total(b)
	switch {
	case ta == nil && tb == nil:
	case ta == nil || tb == nil:
		out = append(out, Finding{Type: CostChanged, DecisionPoint: PointCost, PathA: "cost.total_usd", PathB: "cost.total_usd",
			Before: value(ta), After: value(tb), Detail: "a cost on one side only"})
	case math.Abs(*tb-*ta) > 1e-8:
		delta := *tb - *ta
		detail := pricing.FormatUSD(delta) + " USD"
		if delta > 0 {
			detail = "+" + detail
		}
		if *ta > 0 {
			detail += fmt.Sprintf(" (%+.1f%%)", (*tb-*ta) / *ta * 100)
		}
		detail += partialNote(a.Status, b.Status)
		out = append(out, Finding{Type: CostChanged, DecisionPoint: PointCost, PathA: "cost.total_usd", PathB: "cost.total_usd",
			Before: *ta, After: *tb, Detail: detail})
	}
	if sa, sb := status(a), status(b); sa != sb {
		out = append(out, Finding{Type: CostChanged, DecisionPoint: PointCost, PathA: "cost.status", PathB: "cost.status",
			Before: sa, After: sb, Detail: "cost status changed"})
	}
	return out
}

// CostNotCompared says why the runs' costs were not really compared, "" when they were: cost
// found nothing, yet neither side has a whole figure (both unpriced, or both partial with the
// same figure), so what had no price may have changed unseen. A policy gating on cost_changed
// passes such a run; `reprise ci` says so in the case's message.
func CostNotCompared(a, b *replaycase.Cost) string {
	if len(cost(a, b)) > 0 {
		return ""
	}
	// No finding: both statuses are the same.
	switch status(a) {
	case string(replaycase.CostUnpriced):
		return "cost not compared: both runs are unpriced (no cost figure), so cost_changed cannot fail this case; list usage_changed in fail_on to gate on token counts"
	case string(replaycase.CostPartial):
		return "cost not compared: both runs are partial with the same figure, which leaves out what had no price; list usage_changed in fail_on to gate on token counts"
	}
	return ""
}

// partialNote warns that a delta involves a partial figure, which leaves out what had no price:
// a run whose new model is unpriced is not cheaper by the old model's cost.
func partialNote(a, b replaycase.CostStatus) string {
	pa, pb := a == replaycase.CostPartial, b == replaycase.CostPartial
	switch {
	case pa && pb:
		return "; both figures are partial: they cover only what was priced"
	case pa:
		return "; the before figure is partial: it covers only what was priced"
	case pb:
		return "; the after figure is partial: it covers only what was priced"
	}
	return ""
}

func total(c *replaycase.Cost) *float64 {
	if c == nil {
		return nil
	}
	return c.TotalUSD
}

func status(c *replaycase.Cost) string {
	if c == nil {
		return ""
	}
	return string(c.Status)
}

// value keeps a missing figure out of the JSON (before/after are omitted when nil).
func value(f *float64) any {
	if f == nil {
		return nil
	}
	return *f
}
