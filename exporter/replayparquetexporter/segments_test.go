package replayparquetexporter

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/replaycase"
)

// With file_max_age, batches are staged and published together as one file per dataset: by
// the flush loop once the oldest is that old, and at shutdown.
func TestFileMaxAgeMergesBatchesIntoOneFilePerDataset(t *testing.T) {
	var batches []ptrace.Traces
	for _, run := range []string{testfixtures.OTelEvents, testfixtures.Traceloop, testfixtures.OTelNoContent, testfixtures.OpenInference} {
		td, _ := caseSpans(t, run)
		batches = append(batches, td)
	}
	cfg := testConfig(t)
	cfg.FileMaxAge = 3 * time.Second // well above the time the three writes take on a loaded machine
	exp := newExporter(t, cfg)
	for _, td := range batches[:3] {
		require.NoError(t, exp.ConsumeTraces(context.Background(), td))
	}
	assert.Empty(t, files(t, cfg.Directory), "staged, not visible yet")
	require.Eventually(t, func() bool { return len(files(t, cfg.Directory)) == 3 }, 10*time.Second, 20*time.Millisecond,
		"the flush loop publishes the three batches as one file per dataset")
	assert.Len(t, readAll[replaycase.Case](t, cfg.Directory, dataset.Cases), 2)
	assert.Len(t, readAll[replaycase.Case](t, cfg.Directory, dataset.Quarantine), 1)
	assert.Len(t, readAll[dataset.StepRow](t, cfg.Directory, dataset.Steps), 8)

	require.NoError(t, exp.ConsumeTraces(context.Background(), batches[3]))
	require.NoError(t, exp.Shutdown(context.Background()))
	assert.Len(t, readAll[replaycase.Case](t, cfg.Directory, dataset.Cases), 3, "shutdown publishes what is staged")
	assert.Empty(t, files(t, cfg.staging()), "nothing is left in staging")
	assert.Len(t, files(t, filepath.Join(cfg.Directory, dataset.Cases)), 2)
}
