package replaycase_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/normalize"
	"github.com/reprise-dev/reprise/pricing"
	"github.com/reprise-dev/reprise/replaycase"
)

// Cost and its provenance travel in the canonical form (replay.cost) and read back unchanged.
func TestCanonicalFormCarriesCost(t *testing.T) {
	c, _, genAI := normalize.Build(testfixtures.Traces(t, testfixtures.OTelEvents), testfixtures.Logs(t, testfixtures.OTelEvents))
	require.True(t, genAI)
	tbl, err := pricing.Embedded()
	require.NoError(t, err)
	var llm *replaycase.Step
	for i := range c.Steps {
		if c.Steps[i].Kind == replaycase.StepLLM {
			llm = &c.Steps[i]
		}
	}
	require.NotNil(t, llm)
	pricing.Apply(c, tbl, map[string]float64{llm.SpanID: 0.125})
	require.NotNil(t, c.Cost)
	budget := 0.1
	c.Cost.BudgetUSD, c.Cost.OverBudget = &budget, true

	td := ptrace.NewTraces()
	require.NoError(t, replaycase.Encode(c, td))
	got, err := replaycase.Decode(td)
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, c, got[0])
	assert.Equal(t, replaycase.CostProviderReported, got[0].Cost.Status)
}
