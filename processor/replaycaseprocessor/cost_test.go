package replaycaseprocessor

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap/confmaptest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/reprise-dev/reprise/internal/costfixture"
	"github.com/reprise-dev/reprise/processor/replaycaseprocessor/internal/metadatatest"
	"github.com/reprise-dev/reprise/replaycase"
)

func caseNamed(t *testing.T, cases []*replaycase.Case, traceID string) *replaycase.Case {
	t.Helper()
	for _, c := range cases {
		if c.Provenance.TraceID == traceID {
			return c
		}
	}
	t.Fatalf("no case for trace %s", traceID)
	return nil
}

func TestEveryHandCheckedRunIsPriced(t *testing.T) {
	h := newHarness(t, nil)
	for _, r := range costfixture.Runs {
		h.sendTraces(r.Traces())
	}
	h.shutdown()
	cases := h.cases()
	require.Len(t, cases, len(costfixture.Runs))
	for _, r := range costfixture.Runs {
		t.Run(r.Name, func(t *testing.T) {
			c := caseNamed(t, cases, r.TraceID())
			assert.Equal(t, replaycase.StatusAccepted, c.Status, "reasons %v", reasonCodes(c))
			var step *replaycase.Step
			for i := range c.Steps {
				if c.Steps[i].Kind == replaycase.StepLLM {
					step = &c.Steps[i]
				}
			}
			require.NotNil(t, step)
			require.NotNil(t, step.Cost)
			assert.Equal(t, r.WantStatus, string(step.Cost.Status), step.Cost.Detail)
			assert.Equal(t, r.WantStatus, string(c.Cost.Status))
			assert.Equal(t, "genai-prices", step.Cost.PricingSource)
			assert.Equal(t, "0.2.3", step.Cost.PricingVersion)
			if r.WantStatus == "unpriced" {
				assert.Nil(t, step.Cost.TotalUSD)
				assert.Nil(t, c.Cost.TotalUSD)
				return
			}
			assert.InDelta(t, r.WantTotalUSD, *step.Cost.TotalUSD, 1e-12)
			assert.InDelta(t, r.WantTotalUSD, *c.Cost.TotalUSD, 1e-12)
			assert.InDelta(t, r.WantComputedUSD, *step.Cost.ComputedUSD, 1e-12)
			assert.Equal(t, r.WantTier, step.Cost.Tier)
			assert.Equal(t, r.WantEffective, step.Cost.EffectiveDate)
		})
	}
	// One data point per provider, model and status: 0.0075 + 0.0075 + 0.0091 for gpt-4o.
	metadatatest.AssertEqualProcessorReplayCaseCost(t, h.tel, []metricdata.DataPoint[float64]{
		costPoint("openai", "gpt-4o", "computed", 0.0075),
		costPoint("openai", "gpt-4o", "provider_reported", 0.0091),
		costPoint("openai", "gpt-4o-mini", "computed", 0.00138),
		costPoint("openai", "o3", "computed", 0.042),
		costPoint("anthropic", "claude-sonnet-4-5", "computed", 1.5225),
		costPoint("anthropic", "claude-opus-4-6", "computed", 2.5375+1.275),
		costPoint("openai", "acme-private-7b", "unpriced", 0),
	}, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreValue())
	assertCostSum(t, h, "openai", "gpt-4o", "provider_reported", 0.0091)
	assertCostSum(t, h, "anthropic", "claude-opus-4-6", "computed", 3.8125)
}

func costPoint(provider, model, status string, v float64) metricdata.DataPoint[float64] {
	return metricdata.DataPoint[float64]{Value: v, Attributes: attribute.NewSet(
		attribute.String("provider", provider), attribute.String("model", model), attribute.String("cost_status", status))}
}

func assertCostSum(t *testing.T, h *harness, provider, model, status string, want float64) {
	t.Helper()
	m, err := h.tel.GetMetric("otelcol_processor_replay_case_cost")
	require.NoError(t, err)
	set := costPoint(provider, model, status, 0).Attributes
	for _, dp := range m.Data.(metricdata.Sum[float64]).DataPoints {
		if dp.Attributes.Equals(&set) {
			assert.InDelta(t, want, dp.Value, 1e-12)
			return
		}
	}
	t.Errorf("no cost data point for %s/%s/%s", provider, model, status)
}

func TestTokensCountedByProviderAndModel(t *testing.T) {
	h := newHarness(t, nil)
	r := costfixture.Runs[1] // cached input
	h.sendTraces(r.Traces())
	h.shutdown()
	tok := func(kind string, v int64) metricdata.DataPoint[int64] {
		return metricdata.DataPoint[int64]{Value: v, Attributes: attribute.NewSet(
			attribute.String("provider", "openai"), attribute.String("model", "gpt-4o-mini"), attribute.String("token_type", kind))}
	}
	metadatatest.AssertEqualProcessorReplayCaseTokens(t, h.tel, []metricdata.DataPoint[int64]{
		tok("input", 12000), tok("output", 300), tok("cache_read", 8000),
	}, metricdatatest.IgnoreTimestamp())
}

func TestBudget(t *testing.T) {
	long := costfixture.Runs[3] // 1.5225 USD
	for _, tc := range []struct {
		action     string
		wantStatus replaycase.Status
	}{{budgetFlag, replaycase.StatusAccepted}, {budgetQuarantine, replaycase.StatusQuarantined}} {
		t.Run(tc.action, func(t *testing.T) {
			h := newHarness(t, func(c *Config) { c.Pricing.Budget = BudgetConfig{MaxUSD: 1, Action: tc.action} })
			h.sendTraces(long.Traces())
			h.sendTraces(costfixture.Runs[0].Traces()) // 0.0075 USD, within budget
			h.shutdown()
			cases := h.cases()
			require.Len(t, cases, 2)
			for _, c := range cases {
				require.NotNil(t, c.Cost)
				assert.InDelta(t, 1.0, *c.Cost.BudgetUSD, 0)
				over := *c.Cost.TotalUSD > 1
				assert.Equal(t, over, c.Cost.OverBudget)
				if !over {
					assert.Equal(t, replaycase.StatusAccepted, c.Status)
					continue
				}
				assert.Equal(t, tc.wantStatus, c.Status)
				assert.Equal(t, tc.action == budgetQuarantine, c.HasReason(replaycase.ReasonOverBudget), "reasons %v", reasonCodes(c))
			}
		})
	}
}

func TestPriceFileReplacesTheTable(t *testing.T) {
	file := filepath.Join(t.TempDir(), "genai-prices-9.9.9.json")
	require.NoError(t, os.WriteFile(file, []byte(`[{"id":"openai","name":"OpenAI","api_pattern":"x","models":[
		{"id":"gpt-4o","match":{"equals":"gpt-4o"},"prices":{"input_mtok":1,"output_mtok":1}}]}]`), 0o600))
	h := newHarness(t, func(c *Config) { c.Pricing.PriceFile = file })
	h.sendTraces(costfixture.Runs[0].Traces())
	h.shutdown()
	c := h.cases()[0]
	assert.Equal(t, "9.9.9", c.Cost.PricingVersion)
	assert.InDelta(t, 0.0015, *c.Cost.TotalUSD, 1e-12)
}

func TestPricingConfig(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "pricing.yaml"))
	require.NoError(t, err)

	cfg := createDefaultConfig().(*Config)
	sub, err := cm.Sub("replay_case/budget")
	require.NoError(t, err)
	require.NoError(t, sub.Unmarshal(cfg))
	require.NoError(t, cfg.Validate())
	assert.Equal(t, PricingConfig{PriceFile: "", Budget: BudgetConfig{MaxUSD: 0.5, Action: budgetQuarantine}}, cfg.Pricing)

	bad := createDefaultConfig().(*Config)
	sub, err = cm.Sub("replay_case/bad_pricing")
	require.NoError(t, err)
	require.NoError(t, sub.Unmarshal(bad))
	err = bad.Validate()
	assert.ErrorContains(t, err, "pricing.price_file")
	assert.ErrorContains(t, err, "pricing.budget.max_usd must be a non-negative number")
	assert.ErrorContains(t, err, `pricing.budget.action must be "flag" or "quarantine", got "warn"`)

	bad.Pricing = PricingConfig{Budget: BudgetConfig{MaxUSD: math.NaN(), Action: budgetFlag}}
	assert.ErrorContains(t, bad.Validate(), "pricing.budget.max_usd")
}

// A run with no figure cannot be judged against the budget: it is not over it, and its cost
// says the budget was not judged rather than reading as within it.
func TestBudgetNotJudgedWithoutAFigure(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Pricing.Budget = BudgetConfig{MaxUSD: 1, Action: budgetQuarantine} })
	h.sendTraces(costfixture.Runs[7].Traces()) // an unknown model
	h.shutdown()
	c := h.cases()[0]
	require.NotNil(t, c.Cost)
	assert.Equal(t, replaycase.CostUnpriced, c.Cost.Status)
	assert.False(t, c.Cost.OverBudget)
	assert.Contains(t, c.Cost.Detail, "budget of 1.000000 USD not judged: the run has no cost figure")

	// A model priced for input only: its output tokens have no price, the figure is partial.
	partial := costfixture.Run{Name: "input-only price", Provider: "openai", Model: "text-embedding-3-small",
		Start: costfixture.Runs[0].Start, Input: 1000, Output: 500}
	h = newHarness(t, func(c *Config) { c.Pricing.Budget = BudgetConfig{MaxUSD: 1, Action: budgetQuarantine} })
	h.sendTraces(partial.Traces())
	h.shutdown()
	c = h.cases()[0]
	assert.Equal(t, replaycase.CostPartial, c.Cost.Status)
	assert.Contains(t, c.Cost.Detail, "within the budget of 1.000000 USD only as far as priced")
}
