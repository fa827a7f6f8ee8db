package readers

import (
	"database/sql"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/internal/costfixture"
)

// The hand-checked cost table of issue 14 goes through the processor and the exporter into
// Parquet; DuckDB reads every cost column back per step and per case.
func TestCostColumnsReadBackWithDuckDB(t *testing.T) {
	runs := make([]string, len(costfixture.Runs))
	traces := make([]ptrace.Traces, len(costfixture.Runs))
	for i, r := range costfixture.Runs {
		runs[i], traces[i] = "cost/"+r.Name, r.Traces() // no log fixture by that name: spans only
	}
	root, cases := writeDataset(t, runs, traces)
	require.Len(t, cases, len(costfixture.Runs))
	db := duck(t)

	for _, r := range costfixture.Runs {
		t.Run(r.Name, func(t *testing.T) {
			traceID := r.TraceID()
			var (
				status, source, version, provider, model, tier, effective string
				total, computed, reported, input, output, cacheRead       sql.NullFloat64
				cacheWrite, reasoning, unitInput, unitOutput, caseTotal   sql.NullFloat64
				caseStatus                                                string
			)
			require.NoError(t, db.QueryRow(`
				SELECT s.cost.status, s.cost.pricing_source, s.cost.pricing_version,
				       coalesce(s.cost.provider_id, ''), coalesce(s.cost.model_id, ''), coalesce(s.cost.tier, ''), coalesce(s.cost.effective_date, ''),
				       s.cost.total_usd, s.cost.computed_usd, s.cost.reported_usd, s.cost.input_usd, s.cost.output_usd,
				       s.cost.cache_read_usd, s.cost.cache_write_usd, s.cost.reasoning_usd,
				       s.cost.unit_prices.input, s.cost.unit_prices.output,
				       c.cost.total_usd, c.cost.status
				FROM read_parquet('`+root+`/steps/**/*.parquet', hive_partitioning = true) s
				JOIN read_parquet('`+root+`/cases/**/*.parquet', hive_partitioning = true) c USING (case_id)
				WHERE s.kind = 'llm' AND c.provenance.trace_id = ?`, traceID).Scan(
				&status, &source, &version, &provider, &model, &tier, &effective,
				&total, &computed, &reported, &input, &output, &cacheRead, &cacheWrite, &reasoning,
				&unitInput, &unitOutput, &caseTotal, &caseStatus))
			assert.Equal(t, r.WantStatus, status)
			assert.Equal(t, r.WantStatus, caseStatus)
			assert.Equal(t, "genai-prices", source)
			assert.Equal(t, "0.2.3", version)
			if r.WantStatus == "unpriced" {
				assert.False(t, total.Valid, "an unpriced call has no figure")
				assert.False(t, caseTotal.Valid)
				assert.Empty(t, model)
				return
			}
			assert.InDelta(t, r.WantTotalUSD, total.Float64, 1e-12)
			assert.InDelta(t, r.WantTotalUSD, caseTotal.Float64, 1e-12)
			assert.InDelta(t, r.WantComputedUSD, computed.Float64, 1e-12)
			assert.Equal(t, r.ReportedUSD > 0, reported.Valid)
			assert.InDelta(t, computed.Float64, input.Float64+output.Float64+cacheRead.Float64+cacheWrite.Float64+reasoning.Float64, 1e-12,
				"the parts add up to the computed figure")
			assert.Equal(t, r.Model, model)
			assert.Equal(t, r.Provider, provider)
			assert.Equal(t, r.WantTier, tier)
			assert.Equal(t, r.WantEffective, effective)
			assert.True(t, unitInput.Valid && unitOutput.Valid, "unit prices are recorded")
		})
	}

	// Cost by model over the dataset, as a notebook would ask.
	var n int
	var sum float64
	require.NoError(t, db.QueryRow(`SELECT count(*), sum(cost.total_usd)
		FROM read_parquet('`+root+`/steps/**/*.parquet', hive_partitioning = true)
		WHERE cost.model_id = 'gpt-4o'`).Scan(&n, &sum))
	assert.Equal(t, 2, n)
	assert.InDelta(t, 0.0075+0.0091, sum, 1e-12)
}
