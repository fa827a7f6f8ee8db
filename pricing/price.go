package pricing

import (
	"fmt"
	"strings"
	"time"

	"github.com/reprise-dev/reprise/replaycase"
)

// Price keys of the genai-prices data that token usage is priced with, in USD per million tokens.
const (
	keyInput      = "input_mtok"
	keyOutput     = "output_mtok"
	keyCacheRead  = "cache_read_mtok"
	keyCacheWrite = "cache_write_mtok"
	keyReasoning  = "output_reasoning_mtok"
)

// maxModelRef is the longest model reference that is looked up.
const maxModelRef = 256

// Quote is the price of one call: the matched model and the price set in force.
type Quote struct {
	ProviderID    string
	ModelID       string
	ModelName     string
	PriceChecked  string
	EffectiveDate string   // start date of the price set in force, empty when unconstrained
	PriceDates    []string // every date the model's price changed on, in the data's order
	// PricedAs is the model name priced when it is not the one recorded: the recorded name
	// without a prefix naming the provider (openai/gpt-4o priced as gpt-4o). Empty otherwise.
	PricedAs string
	prices   prices
}

// Lookup finds the price in force at t for a model of a provider. The provider may be empty
// (the model then selects the provider). modelRefs are tried in order (the response model, then
// the request model). The error says what was not found.
func (t *Table) Lookup(providerName string, modelRefs []string, at time.Time) (*Quote, error) {
	var tried []string
	for _, ref := range modelRefs {
		if ref == "" {
			continue
		}
		if len(ref) > maxModelRef {
			// No model id is this long; a longer value is not a model reference, and matching
			// it would only give a backtracking pattern more text to run over.
			tried = append(tried, ref[:maxModelRef]+"…")
			continue
		}
		tried = append(tried, ref)
		found := t.match(providerName, ref)
		p, m := found.provider, found.model
		if p == nil && providerName != "" {
			return nil, fmt.Errorf("provider %q is not in the price table", providerName)
		}
		if m == nil {
			continue
		}
		q := &Quote{ProviderID: p.ID, ModelID: m.ID, ModelName: m.Name, PriceChecked: m.PricesChecked, PricedAs: found.pricedAs}
		set := m.Prices.inForce(at)
		q.prices = set.Prices
		if set.Constraint != nil {
			q.EffectiveDate = set.Constraint.StartDate
		}
		for _, s := range m.Prices {
			if s.Constraint != nil && s.Constraint.StartDate != "" {
				q.PriceDates = append(q.PriceDates, s.Constraint.StartDate)
			}
		}
		return q, nil
	}
	if len(tried) == 0 {
		return nil, fmt.Errorf("no model recorded")
	}
	where := "any provider"
	if providerName != "" {
		where = fmt.Sprintf("provider %q", providerName)
	}
	return nil, fmt.Errorf("model %s not found for %s", strings.Join(quoteAll(tried), " / "), where)
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}

// inForce is the last price set whose constraint holds at t; the first set when none does
// (genai-prices' rule).
func (c conditional) inForce(t time.Time) priceSet {
	for i := len(c) - 1; i >= 0; i-- {
		if c[i].Constraint == nil || c[i].Constraint.active(t) {
			return c[i]
		}
	}
	return c[0]
}

// Cost prices usage with the quote. Token kinds do not overlap in the result: cache reads and
// writes are taken out of the input tokens and reasoning out of the output tokens; a kind
// without a price of its own is priced as its parent. A count with no price at all makes the
// result partial, and so do tokens that total_tokens counts and no other count does.
func (q *Quote) Cost(u replaycase.Usage) replaycase.Cost { return q.cost(u, 0) }

// cost is Cost with oneHourWrites of the cache write tokens priced at the one-hour price
// (oneHourWrites below), the rest at the five-minute one; cache_write_usd is their sum.
func (q *Quote) cost(u replaycase.Usage, oneHourWrites int64) replaycase.Cost {
	// Every figure of the result points into one allocation: a priced step took about ten.
	figures := new(costFigures)
	c := replaycase.Cost{ProviderID: q.ProviderID, ModelID: q.ModelID, PriceChecked: q.PriceChecked,
		EffectiveDate: q.EffectiveDate, UnitPrices: &figures.unit}
	uncached := u.InputTokens - u.CacheReadInputTokens - u.CacheWriteInputTokens
	plain := u.OutputTokens - u.ReasoningOutputTokens
	if uncached < 0 || plain < 0 {
		c.Status = replaycase.CostUnpriced
		c.Detail = fmt.Sprintf("inconsistent usage: cache tokens (%d read, %d write) exceed input tokens (%d) or reasoning tokens (%d) exceed output tokens (%d)",
			u.CacheReadInputTokens, u.CacheWriteInputTokens, u.InputTokens, u.ReasoningOutputTokens, u.OutputTokens)
		c.UnitPrices = nil
		return c
	}
	// A fixed array, so that c, which the parts point into, stays on the stack.
	parts := [...]struct {
		tokens int64
		keys   []string // own price key, then the parent's
		usd    **float64
		unit   **float64
	}{
		{uncached, []string{keyInput}, &c.InputUSD, &c.UnitPrices.Input},
		{plain, []string{keyOutput}, &c.OutputUSD, &c.UnitPrices.Output},
		{u.CacheReadInputTokens, []string{keyCacheRead, keyInput}, &c.CacheReadUSD, &c.UnitPrices.CacheRead},
		{u.CacheWriteInputTokens - oneHourWrites, []string{keyCacheWrite, keyInput}, &c.CacheWriteUSD, &c.UnitPrices.CacheWrite},
		{u.ReasoningOutputTokens, []string{keyReasoning, keyOutput}, &c.ReasoningUSD, &c.UnitPrices.Reasoning},
		// One-hour cache writes, into cache_write_usd beside the five-minute ones; unit_prices
		// holds one cache write price, the five-minute one (the cost's detail names the other).
		{oneHourWrites, []string{keyCacheWrite1h, keyCacheWrite, keyInput}, &c.CacheWriteUSD, nil},
	}
	n := len(parts)
	if oneHourWrites <= 0 {
		n-- // without one-hour writes, as every price table but Anthropic's
	}
	total := 0.0
	var missing, tiers []string
	priced := false
	for i, part := range parts[:n] {
		price := q.price(part.keys)
		if price == nil {
			if part.tokens > 0 {
				missing = append(missing, part.keys[0])
			}
			continue
		}
		unit, tier := price.at(u.InputTokens)
		if tier >= 0 {
			tiers = appendOnce(tiers, fmt.Sprintf("input_tokens>%d", tier))
		}
		usd := float64(part.tokens) * unit / 1e6
		total += usd
		figures.usd[i], figures.units[i] = usd, unit
		if *part.usd == nil {
			*part.usd = &figures.usd[i]
		} else {
			**part.usd += usd // one-hour cache writes, after the five-minute ones
		}
		if part.unit != nil {
			*part.unit = &figures.units[i]
		}
		priced = true
	}
	c.Tier = strings.Join(tiers, ",")
	var gaps []string
	if len(missing) > 0 {
		gaps = append(gaps, "no price for "+strings.Join(missing, ", "))
	}
	// total_tokens counting more than input and output do holds tokens of no recorded kind
	// (thoughts or cache tokens an instrumentation left out of those counts): they have no
	// price, so the figure is a part of the call's cost, not all of it.
	if u.TotalTokens-u.InputTokens > u.OutputTokens {
		gaps = append(gaps, fmt.Sprintf("total_tokens (%d) exceeds input + output tokens (%d + %d): %d tokens of no recorded kind are not priced",
			u.TotalTokens, u.InputTokens, u.OutputTokens, u.TotalTokens-u.InputTokens-u.OutputTokens))
	}
	switch {
	case !priced:
		c.Status = replaycase.CostUnpriced
		c.Detail = fmt.Sprintf("model %q has no token prices", q.ModelID)
		return c
	case len(gaps) > 0:
		c.Status = replaycase.CostPartial
		c.Detail = strings.Join(gaps, "; ")
	default:
		c.Status = replaycase.CostComputed
	}
	figures.computed, figures.total = total, total
	c.ComputedUSD, c.TotalUSD = &figures.computed, &figures.total
	return c
}

// costFigures holds what one Cost's pointers point to, each figure in a field of its own.
type costFigures struct {
	unit            replaycase.UnitPrices
	usd, units      [6]float64 // by part, in Cost's order, one-hour cache writes last
	computed, total float64
}

// price is the first of keys the quote has a price for.
func (q *Quote) price(keys []string) *tiered {
	for _, k := range keys {
		if p := q.prices.get(k); p != nil {
			return p
		}
	}
	return nil
}

// at is the unit price for a call with inputTokens input tokens (cache included) and the start
// of the tier applied, -1 for the base price. Crossing a tier's start prices every token at the
// tier (genai-prices' rule).
func (p *tiered) at(inputTokens int64) (float64, int64) {
	for i := len(p.Tiers) - 1; i >= 0; i-- {
		if inputTokens > p.Tiers[i].Start {
			return p.Tiers[i].Price, p.Tiers[i].Start
		}
	}
	return p.Base, -1
}

func appendOnce(ss []string, s string) []string {
	for _, x := range ss {
		if x == s {
			return ss
		}
	}
	return append(ss, s)
}

// PriceLine is one price of a quote, for display: USD per unit of the key (per million tokens
// for *_mtok keys), and the long-context tiers above it.
type PriceLine struct {
	Key   string
	Base  float64
	Tiers []TierLine
}

// TierLine is a tier: from more than Start input tokens, every token costs Price.
type TierLine struct {
	Start int64
	Price float64
}

// Lines lists the quote's prices, sorted by key.
func (q *Quote) Lines() []PriceLine {
	var out []PriceLine
	for _, p := range q.prices {
		line := PriceLine{Key: p.key, Base: p.Base}
		for _, t := range p.Tiers {
			line.Tiers = append(line.Tiers, TierLine{Start: t.Start, Price: t.Price})
		}
		out = append(out, line)
	}
	return out
}
