package casediff

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/pricing"
	"github.com/reprise-dev/reprise/replaycase"
)

func priced(t *testing.T, c *replaycase.Case) *replaycase.Case {
	t.Helper()
	tbl, err := pricing.Embedded()
	require.NoError(t, err)
	pricing.Apply(c, tbl, nil)
	return c
}

// costlier is the otel-events run answering with 2000 more output tokens on its last model call.
func costlier(t *testing.T) *replaycase.Case {
	b := clone(t, fixtureCase(t, testfixtures.OTelEvents))
	b.CaseID = "costlier"
	for i := len(b.Steps) - 1; i >= 0; i-- {
		if b.Steps[i].Kind == replaycase.StepLLM {
			b.Steps[i].Usage.OutputTokens += 2000
			b.Steps[i].Usage.TotalTokens += 2000
			b.Usage.OutputTokens += 2000
			b.Usage.TotalTokens += 2000
			break
		}
	}
	return priced(t, b)
}

func TestCostDeltaIsASecondaryFinding(t *testing.T) {
	a := priced(t, fixtureCase(t, testfixtures.OTelEvents))
	r := Compare(a, costlier(t))
	golden(t, "otel-events_vs_costlier", r)
	require.Equal(t, 1, r.Counts[CostChanged])
	assert.True(t, CostChanged.Secondary(), "a cost delta alone must not fail a case by default")
	for _, f := range r.Findings {
		if f.Type == CostChanged {
			// 2000 output tokens of gpt-4o-mini at 0.6 USD per million.
			assert.InDelta(t, 0.0012, f.After.(float64)-f.Before.(float64), 1e-12)
		}
	}
	assert.Empty(t, Compare(a, a).Findings)
}

func TestCostStatusChange(t *testing.T) {
	a := priced(t, fixtureCase(t, testfixtures.OTelEvents))
	b := fixtureCase(t, testfixtures.OTelEvents)
	for i := range b.Steps {
		b.Steps[i].ModelConfig.ResponseModel, b.Steps[i].ModelConfig.RequestModel = "in-house-7b", "in-house-7b"
	}
	priced(t, b)
	var got []string
	for _, f := range Compare(a, b).Findings {
		if f.Type == CostChanged {
			got = append(got, f.PathB+" "+f.Detail)
		}
	}
	assert.Equal(t, []string{"cost.total_usd a cost on one side only", "cost.status cost status changed"}, got)
}

// clone is a deep copy of c through its JSON form.
func clone(t *testing.T, c *replaycase.Case) *replaycase.Case {
	t.Helper()
	raw, err := json.Marshal(c)
	require.NoError(t, err)
	var out replaycase.Case
	require.NoError(t, json.Unmarshal(raw, &out))
	return &out
}

// A delta too small for six decimals is still written as a change, not as +0.000000 USD.
func TestTinyCostDeltaIsNotShownAsZero(t *testing.T) {
	a, b := 0.00001, 0.0000103
	fs := cost(&replaycase.Cost{Status: replaycase.CostComputed, TotalUSD: &a}, &replaycase.Cost{Status: replaycase.CostComputed, TotalUSD: &b})
	require.Len(t, fs, 1)
	assert.Equal(t, "+0.0000003 USD (+3.0%)", fs[0].Detail)
}

// A figure that covers only the priced calls (partial) is no cost of the run: a delta against
// it says so, instead of reading as the run getting cheaper or dearer by that much.
func TestCostDeltaOfAPartialFigureSaysSo(t *testing.T) {
	a, b := 1.0, 0.5
	fs := cost(&replaycase.Cost{Status: replaycase.CostComputed, TotalUSD: &a}, &replaycase.Cost{Status: replaycase.CostPartial, TotalUSD: &b})
	require.Len(t, fs, 2)
	assert.Equal(t, "-0.500000 USD (-50.0%); the after figure is partial: it covers only what was priced", fs[0].Detail)
	fs = cost(&replaycase.Cost{Status: replaycase.CostPartial, TotalUSD: &a}, &replaycase.Cost{Status: replaycase.CostPartial, TotalUSD: &b})
	require.Len(t, fs, 1)
	assert.Equal(t, "-0.500000 USD (-50.0%); both figures are partial: they cover only what was priced", fs[0].Detail)
}
