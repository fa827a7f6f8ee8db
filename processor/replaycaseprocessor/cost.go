package replaycaseprocessor

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"sync"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/reprise-dev/reprise/pricing"
	"github.com/reprise-dev/reprise/processor/replaycaseprocessor/internal/metadata"
	"github.com/reprise-dev/reprise/replaycase"
)

// PricingConfig says how the cost of each case is computed and judged (docs/cost.md).
type PricingConfig struct {
	// PriceFile is a price file in the genai-prices JSON shape that replaces the table built into
	// the binary (genai-prices 0.2.3); `reprise prices update --from FILE` validates and installs
	// one. Default "": the built-in table. The file is read once, at start; no network is used.
	PriceFile string `mapstructure:"price_file"`
	// Budget flags or quarantines a case whose cost of record exceeds a limit.
	Budget BudgetConfig `mapstructure:"budget"`
}

// BudgetConfig is a per-case cost limit.
type BudgetConfig struct {
	// MaxUSD is the most a case may cost, in US dollars. Default 0: no budget.
	MaxUSD float64 `mapstructure:"max_usd"`
	// Action is what happens to a case over budget: "flag" marks it (cost.over_budget = true)
	// and keeps the verdict; "quarantine" also quarantines it with reason over_budget. Default
	// (empty): flag.
	Action string `mapstructure:"action"`
}

const (
	budgetFlag       = "flag"
	budgetQuarantine = "quarantine"
)

func (c PricingConfig) validate() []error {
	var errs []error
	if c.PriceFile != "" {
		if _, err := os.Stat(c.PriceFile); err != nil {
			errs = append(errs, fmt.Errorf("pricing.price_file: %w", err))
		}
	}
	if c.Budget.MaxUSD < 0 || math.IsNaN(c.Budget.MaxUSD) || math.IsInf(c.Budget.MaxUSD, 0) {
		errs = append(errs, fmt.Errorf("pricing.budget.max_usd must be a non-negative number of US dollars (0: no budget), got %v", c.Budget.MaxUSD))
	}
	switch c.Budget.Action {
	case "", budgetFlag, budgetQuarantine:
	default:
		errs = append(errs, fmt.Errorf("pricing.budget.action must be %q or %q, got %q", budgetFlag, budgetQuarantine, c.Budget.Action))
	}
	if c.Budget.Action == budgetQuarantine && c.Budget.MaxUSD == 0 {
		errs = append(errs, errors.New("pricing.budget.action quarantine needs pricing.budget.max_usd: 0 is no budget, so no case would be quarantined"))
	}
	return errs
}

// pricer prices every case the processor builds, applies the budget and counts cost and tokens.
type pricer struct {
	table     *pricing.Table
	budget    BudgetConfig
	telemetry *metadata.TelemetryBuilder
	attrs     metricAttrs
}

func newPricer(cfg PricingConfig, tb *metadata.TelemetryBuilder) (*pricer, error) {
	var (
		t   *pricing.Table
		err error
	)
	if cfg.PriceFile != "" {
		t, err = pricing.LoadFile(cfg.PriceFile)
	} else {
		t, err = pricing.Embedded()
	}
	if err != nil {
		return nil, errors.Join(errors.New("pricing.price_file"), err)
	}
	return &pricer{table: t, budget: cfg.Budget, telemetry: tb}, nil
}

// apply writes the case's cost (reported costs read from its spans), judges the budget and
// records the metrics.
func (p *pricer) apply(ctx context.Context, c *replaycase.Case, spans ptrace.Traces) {
	pricing.ApplyReported(c, p.table, pricing.ReadReported(spans))
	if c.Cost != nil && p.budget.MaxUSD > 0 {
		limit := p.budget.MaxUSD
		c.Cost.BudgetUSD = &limit
		switch {
		case c.Cost.TotalUSD != nil && *c.Cost.TotalUSD > limit:
			c.Cost.OverBudget = true
			if p.budget.Action == budgetQuarantine {
				c.Quarantine(replaycase.ReasonOverBudget, fmt.Sprintf("the run cost %s USD (%s), over the budget of %s USD", pricing.FormatUSD(*c.Cost.TotalUSD), c.Cost.Status, pricing.FormatUSD(limit)), "")
			}
		case c.Cost.TotalUSD == nil:
			// Not over the budget is not within it: a run of a model the table does not know
			// may have cost anything.
			pricing.AddDetail(c.Cost, fmt.Sprintf("budget of %s USD not judged: the run has no cost figure", pricing.FormatUSD(limit)))
		case c.Cost.Status == replaycase.CostPartial:
			pricing.AddDetail(c.Cost, fmt.Sprintf("within the budget of %s USD only as far as priced", pricing.FormatUSD(limit)))
		}
	}
	p.record(ctx, c)
}

func (p *pricer) record(ctx context.Context, c *replaycase.Case) {
	for i := range c.Steps {
		st := &c.Steps[i]
		if st.Cost == nil {
			continue
		}
		provider := cmp.Or(st.Cost.ProviderID, st.ModelConfig.Provider)
		model := cmp.Or(st.Cost.ModelID, st.ModelConfig.ResponseModel, st.ModelConfig.RequestModel)
		usd := 0.0
		if st.Cost.TotalUSD != nil {
			usd = *st.Cost.TotalUSD
		}
		p.telemetry.ProcessorReplayCaseCost.Add(ctx, usd, p.attrs.get(provider, model, "cost_status", string(st.Cost.Status)))
		u := st.Usage
		for _, tok := range []struct {
			kind  string
			count int64
		}{{"input", u.InputTokens}, {"output", u.OutputTokens}, {"cache_read", u.CacheReadInputTokens}, {"cache_write", u.CacheWriteInputTokens}, {"reasoning", u.ReasoningOutputTokens}} {
			if tok.count > 0 {
				p.telemetry.ProcessorReplayCaseTokens.Add(ctx, tok.count, p.attrs.get(provider, model, "token_type", tok.kind))
			}
		}
	}
}

// metricAttrs remembers the attribute sets of the cost and token metrics: the same few
// providers, models and labels come back on every step, and building a set allocates. It is
// bounded (model names come from the telemetry): once full it starts over.
type metricAttrs struct {
	mu   sync.Mutex
	sets map[metricAttrKey]metric.MeasurementOption
}

type metricAttrKey struct{ provider, model, label, value string }

const maxMetricAttrSets = 4096

func (m *metricAttrs) get(provider, model, label, value string) metric.MeasurementOption {
	k := metricAttrKey{provider, model, label, value}
	m.mu.Lock()
	defer m.mu.Unlock()
	if opt, ok := m.sets[k]; ok {
		return opt
	}
	if m.sets == nil || len(m.sets) >= maxMetricAttrSets {
		m.sets = make(map[metricAttrKey]metric.MeasurementOption)
	}
	// Cloned: the names may be substrings of a large recorded body, which the metric SDK and
	// this map would keep alive.
	k = metricAttrKey{strings.Clone(provider), strings.Clone(model), label, strings.Clone(value)}
	opt := metric.WithAttributeSet(attribute.NewSet(
		attribute.String("provider", k.provider), attribute.String("model", k.model), attribute.String(label, k.value)))
	m.sets[k] = opt
	return opt
}
