package replayparquetexporter

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/internal/droplog/droplogtest"
	"github.com/reprise-dev/reprise/internal/testdataset/faults"
	"github.com/reprise-dev/reprise/replaycase"
)

// The collector samples its logger: of a burst of one message it keeps a few lines, and the ids
// of the others were lost. Every case spans group that is quarantined instead of written, or
// dropped, is named on the unsampled drop logger (before 2026-12-07: 11 of 150 of each).
func TestEveryUndecodableCaseIsNamedWhenTheCollectorSamplesItsLogs(t *testing.T) {
	td := ptrace.NewTraces()
	var claimed []string
	for i := range droplogtest.Burst {
		appendSpan(td, byte(i+1), 1, map[string]any{replaycase.AttrCaseID: fmt.Sprint("quarantined-", i)}) // a case id and nothing else
		claimed = append(claimed, fmt.Sprint("dropped-", i))
		appendSpan(td, 0, 0, map[string]any{replaycase.AttrCaseID: claimed[i]}) // no trace or span id to quarantine it under
	}
	cfg := testConfig(t)
	set, _, _ := observedSettings(t)
	collector, drops, logs := droplogtest.Observed()
	set.Logger = collector
	exp := startWithDropLog(t, set, drops, cfg)
	require.NoError(t, exp.ConsumeTraces(context.Background(), td))
	require.NoError(t, exp.Shutdown(context.Background()))

	var quarantined []string
	for _, c := range readAll[replaycase.Case](t, cfg.Directory, dataset.Quarantine) {
		quarantined = append(quarantined, c.CaseID)
	}
	require.Len(t, quarantined, droplogtest.Burst)
	assert.ElementsMatch(t, quarantined, droplogtest.Named(logs, "case spans could not be decoded; written to quarantine/", "case_id"), "each quarantined case once")
	assert.ElementsMatch(t, claimed, droplogtest.Named(logs, "case spans dropped: they cannot be decoded and carry no trace or span id to quarantine them under", "claimed_case_id"),
		"each dropped group once")
}

// A full disk fails every batch: each is dead-lettered and named with its case ids, the ones to
// re-drive if the queue's retries run out; none is lost to the sampler.
func TestEveryDeadLetteredBatchIsNamedWhenTheCollectorSamplesItsLogs(t *testing.T) {
	cases := runsOf(t, droplogtest.Burst)
	cfg := testConfig(t)
	cfg.RetryConfig.Enabled = false
	set, _, _ := observedSettings(t)
	collector, drops, logs := droplogtest.Observed()
	set.Logger = collector
	exp := startWithDropLog(t, set, drops, cfg, faults.DiskFull(0))
	var ids []string
	for _, c := range cases { // one batch each
		td := ptrace.NewTraces()
		require.NoError(t, replaycase.Encode(c, td))
		require.Error(t, exp.ConsumeTraces(context.Background(), td))
		ids = append(ids, c.CaseID)
	}
	require.NoError(t, exp.Shutdown(context.Background()))

	assert.Len(t, files(t, filepath.Join(cfg.Directory, dataset.Failed)), droplogtest.Burst)
	assert.ElementsMatch(t, ids, droplogtest.Named(logs, "writing a batch failed; its cases are dead-lettered and the queue retries it", "case_ids"), "each batch once")
}
