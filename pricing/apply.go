package pricing

import (
	"fmt"

	"github.com/reprise-dev/reprise/replaycase"
)

// Apply writes the cost of every LLM and embedding step of c and the case's total. reported
// holds the costs that a provider or the instrumentation reported, by step span id
// (ReportedCosts); such a step keeps the reported figure as its cost of record and gets the
// table's figure beside it. A table of nil prices nothing: every step is unpriced.
func Apply(c *replaycase.Case, t *Table, reported map[string]float64) {
	apply(c, t, Reported{USD: reported})
}

// apply is Apply with all that the spans recorded beside the steps: reported costs and how
// cache writes split by lifetime.
func apply(c *replaycase.Case, t *Table, r Reported) {
	for i := range c.Steps {
		st := &c.Steps[i]
		if st.Kind != replaycase.StepLLM && st.Kind != replaycase.StepEmbedding {
			continue
		}
		w, split := r.CacheWrites[st.SpanID]
		cost := stepCost(st, t, w, split)
		if usd, ok := r.USD[st.SpanID]; ok {
			if usd == 0 && countsTokens(st.Usage) {
				// OpenLIT writes gen_ai.usage.cost = 0 for a model it has no price for: 0 for a
				// call that used tokens says nothing about what it cost.
				AddDetail(&cost, "reported cost 0 not used: the call used tokens (an instrumentation reports 0 for a model it has no price for)")
			} else {
				cost.ReportedUSD = &usd
				cost.TotalUSD = &usd
				cost.Status = replaycase.CostProviderReported
			}
		}
		st.Cost = &cost
	}
	c.Cost = caseCost(c.Steps, t)
}

// ApplyReported is Apply with what the spans reported, and it says in each step's cost
// detail which reported cost was not used for not being a finite non-negative number.
func ApplyReported(c *replaycase.Case, t *Table, r Reported) {
	apply(c, t, r)
	if len(r.Rejected) == 0 {
		return
	}
	for i := range c.Steps {
		st := &c.Steps[i]
		if rejected, ok := r.Rejected[st.SpanID]; ok && st.Cost != nil {
			AddDetail(st.Cost, "reported cost not used (not a number from 0 to 1e15 USD): "+rejected)
		}
	}
}

// stepCost prices a step from the table; w is how its cache writes split by lifetime, when
// split says the spans recorded it.
func stepCost(st *replaycase.Step, t *Table, w CacheWrites, split bool) replaycase.Cost {
	if t == nil {
		return replaycase.Cost{Status: replaycase.CostUnpriced, Detail: "no price table"}
	}
	u := st.Usage
	if !countsTokens(u) {
		detail := "no token usage recorded"
		if u.TotalTokens > 0 {
			// Input and output tokens have different prices: a total alone prices neither.
			detail = fmt.Sprintf("only total_tokens (%d) recorded, not input and output tokens", u.TotalTokens)
		}
		return withSource(replaycase.Cost{Status: replaycase.CostUnpriced, Detail: detail}, t)
	}
	mc := st.ModelConfig
	q, err := t.Lookup(mc.Provider, []string{mc.ResponseModel, mc.RequestModel}, st.StartTime)
	if err != nil {
		return withSource(replaycase.Cost{Status: replaycase.CostUnpriced, Detail: err.Error()}, t)
	}
	oneHour, note := oneHourWrites(q, u, w, split)
	cost := q.cost(u, oneHour)
	if note != "" && cost.TotalUSD != nil {
		AddDetail(&cost, note)
	}
	if q.PricedAs != "" {
		AddDetail(&cost, fmt.Sprintf("priced as %q: the model name recorded without its provider prefix", q.PricedAs))
	}
	return withSource(cost, t)
}

// countsTokens reports whether the usage holds a token count of a kind that has a price.
func countsTokens(u replaycase.Usage) bool {
	return u.InputTokens > 0 || u.OutputTokens > 0 || u.CacheReadInputTokens > 0 || u.CacheWriteInputTokens > 0
}

// AddDetail appends a note to a cost's detail, after what it already says.
func AddDetail(c *replaycase.Cost, note string) {
	if c.Detail != "" {
		note = c.Detail + "; " + note
	}
	c.Detail = note
}

func withSource(c replaycase.Cost, t *Table) replaycase.Cost {
	c.PricingSource = Source
	c.PricingVersion = t.Version
	return c
}

// caseCost sums the steps' costs. The case is computed when every priced step is, unpriced when
// no step has a figure, partial when some step has none or only part of one, and
// provider_reported when at least one step's figure was reported and none is missing.
func caseCost(steps []replaycase.Step, t *Table) *replaycase.Cost {
	var costs []*replaycase.Cost
	for i := range steps {
		if steps[i].Cost != nil {
			costs = append(costs, steps[i].Cost)
		}
	}
	if len(costs) == 0 {
		return nil
	}
	out := replaycase.Cost{}
	if t != nil {
		out = withSource(out, t)
	}
	add := func(dst **float64, v *float64) {
		if v == nil {
			return
		}
		if *dst == nil {
			*dst = new(float64)
		}
		**dst += *v
	}
	unpriced, partial, reported := 0, 0, 0
	for _, sc := range costs {
		switch sc.Status {
		case replaycase.CostUnpriced:
			unpriced++
		case replaycase.CostPartial:
			partial++
		case replaycase.CostProviderReported:
			reported++
		}
		add(&out.TotalUSD, sc.TotalUSD)
		add(&out.ComputedUSD, sc.ComputedUSD)
		add(&out.ReportedUSD, sc.ReportedUSD)
		add(&out.InputUSD, sc.InputUSD)
		add(&out.OutputUSD, sc.OutputUSD)
		add(&out.CacheReadUSD, sc.CacheReadUSD)
		add(&out.CacheWriteUSD, sc.CacheWriteUSD)
		add(&out.ReasoningUSD, sc.ReasoningUSD)
	}
	switch {
	case unpriced == len(costs):
		out.Status = replaycase.CostUnpriced
		out.Detail = fmt.Sprintf("none of the %d model calls is priced", len(costs))
	case unpriced > 0 || partial > 0:
		out.Status = replaycase.CostPartial
		out.Detail = fmt.Sprintf("%d of %d model calls unpriced, %d partly priced", unpriced, len(costs), partial)
	case reported > 0:
		out.Status = replaycase.CostProviderReported
	default:
		out.Status = replaycase.CostComputed
	}
	return &out
}
