package kafka

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/internal/testcollector"
	"github.com/reprise-dev/reprise/replaycase"
)

// A rolling restart: a tier-2 collector is stopped gracefully (SIGTERM) while it holds the first
// half of runs and started again within session_timeout; the second halves are sent while it is
// down. Static membership keeps its partitions for it, and keep_open_on_shutdown keeps the open
// halves in its storage, so every run is one row holding all its spans. Closing the open cases at
// shutdown wrote each first half as a row of its own and the second half as another.
func TestGracefulRestartOfATier2CollectorSplitsNothing(t *testing.T) {
	const n = 40
	c, runs, s := headsConsumed(t, n, "REPRISE_ROOT_GRACE=2s")

	restarted := c.tier2[1]
	restarted.stop(t)
	for _, r := range runs {
		require.NoError(t, s.post("/v1/traces", r.tail))
	}
	time.Sleep(2 * time.Second)
	restarted.start(t)
	t.Logf("assignment after the restart: %s", c.waitAligned(t))

	byTrace := c.waitRowsByTrace(t, 5*n)
	c.waitClosed(t, time.Minute)
	time.Sleep(5 * time.Second) // the exporter's flush_timeout and upload of the last cases
	clear(byTrace)
	for _, r := range datasetRows(t, c.store) {
		byTrace[r.Provenance.TraceID] = append(byTrace[r.Provenance.TraceID], r)
	}
	for _, r := range runs {
		parts := byTrace[r.traceID]
		require.NotEmpty(t, parts, "run %s has no row", r.traceID)
		ids := map[string]bool{}
		for _, p := range parts {
			ids[p.CaseID] = true
			assert.Equal(t, int64(5), p.Provenance.SpanCount, "run %s: a row holds part of the run (%v)", r.traceID, reasonCodesOf(p))
			assert.False(t, p.HasReason(replaycase.ReasonTraceSplit), "run %s marked trace_split", r.traceID)
		}
		assert.Len(t, ids, 1, "run %s is in %d cases", r.traceID, len(ids))
	}
	for _, p := range c.tier2 {
		assert.Zero(t, testcollector.Metric(p.metrics, "otelcol_processor_replay_case_split_traces"), p.name)
		assert.Zero(t, testcollector.Metric(p.metrics, "otelcol_processor_replay_case_dropped_cases"), p.name)
	}
	for _, p := range append([]*collector{c.tier1}, c.tier2...) {
		p.stop(t)
	}
}

func reasonCodesOf(c replaycase.Case) []string {
	var out []string
	for _, r := range c.Reasons {
		out = append(out, r.Code)
	}
	return out
}
