package replayparquetreceiver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/internal/droplog/droplogtest"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/internal/teststorage"
	"github.com/reprise-dev/reprise/receiver/replayparquetreceiver/internal/metadatatest"
)

// The collector samples its logger: of a burst of one message it keeps a few lines, and the ids
// of the others were lost. Every case dropped, every case whose raw log events are not emitted
// and every file set aside is named on the unsampled drop logger (before 2026-12-07: 11 of 150
// of each).
func TestEveryDropIsNamedWhenTheCollectorSamplesItsLogs(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	capture(t, root, testfixtures.OTelNoContent, 1, droplogtest.Burst, strict)
	var ids []string
	for _, r := range rowsOf(t, root, dataset.Quarantine) {
		ids = append(ids, r.c.CaseID)
	}
	require.Len(t, ids, droplogtest.Burst)
	listed, err := dataset.NewLister(root, dataset.Quarantine).Next()
	require.NoError(t, err)
	var notParquet []string
	for i := range droplogtest.Burst {
		path := filepath.Join(filepath.Dir(listed[0].Path), fmt.Sprintf("part-00000000-0000-7000-8000-%012d.zstd.parquet", i))
		require.NoError(t, os.WriteFile(path, []byte("not parquet"), 0o644))
		notParquet = append(notParquet, path)
	}

	tt := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tt.Shutdown(context.Background())) })
	set := metadatatest.NewSettings(tt)
	collector, drops, logs := droplogtest.Observed()
	set.Logger = collector
	refuse, err := consumer.NewTraces(func(context.Context, ptrace.Traces) error {
		return consumererror.NewPermanent(errors.New("refused (test)"))
	})
	require.NoError(t, err)
	host, ext := teststorage.Start(t, t.TempDir())
	rcv, r := newTestReceiver(t, set, root, func(c *Config) { c.BatchSize = 1 }, refuse, nil) // in no logs pipeline
	r.dropLog = drops
	require.NoError(t, rcv.Start(context.Background(), host))
	waitBacklog(t, r)
	require.NoError(t, rcv.Shutdown(context.Background()))
	require.NoError(t, ext.Shutdown(context.Background()))

	assert.ElementsMatch(t, ids, droplogtest.Named(logs, "replay case dropped", "case_id"), "each dropped case once")
	assert.ElementsMatch(t, ids, droplogtest.Named(logs, "the raw log events of these cases are not emitted: replay_parquet is in no logs pipeline", "case_ids"),
		"each case whose events are not emitted once")
	assert.ElementsMatch(t, notParquet, droplogtest.Named(logs, "set aside a file that is not a data file this build reads; the rows it could read were emitted, and it is not read again", "file"),
		"each file set aside once")
}
