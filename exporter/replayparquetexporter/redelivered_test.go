package replayparquetexporter

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"
	"go.uber.org/zap/zaptest/observer"

	"github.com/reprise-dev/reprise/exporter/replayparquetexporter/internal/metadatatest"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/replaycase"
)

// config/gateway.yaml's chain, killed after the exporter wrote a batch and before its persistent
// queue learnt it: after the restart the queue delivers the batch again, and the restarted
// exporter writes each case once, counts the cases it did not write twice and names them. A
// case delivered again with other content is written.
func TestABatchThePersistentQueueDeliversAgainIsWrittenOnce(t *testing.T) {
	ctx := context.Background()
	td, cases := caseSpans(t, testfixtures.OTelEvents, testfixtures.Traceloop, testfixtures.OTelNoContent)
	cfg := testConfig(t)
	storage := component.MustNewID("file_storage")
	cfg.QueueConfig.GetOrInsertDefault().StorageID = &storage
	start := func() (*parquetExporter, *componenttest.Telemetry, *observer.ObservedLogs) {
		set, tel, logs := observedSettings(t)
		e, err := newParquetExporter(set, cfg)
		require.NoError(t, err)
		require.NoError(t, e.start(ctx, componenttest.NewNopHost()))
		return e, tel, logs
	}
	killed, _, _ := start()
	again := ptrace.NewTraces()
	td.CopyTo(again) // the queue's copy, delivered again
	require.NoError(t, killed.push(ctx, td))
	require.NoError(t, killed.shutdown(ctx)) // the files are published: the crash came after the write

	stderr := captureStderr(t)
	restarted, tel, _ := start()
	require.NoError(t, restarted.push(ctx, again))
	changed := cases[0]
	changed.EndTime = changed.EndTime.Add(time.Second)
	redriven := ptrace.NewTraces()
	require.NoError(t, replaycase.Encode(changed, redriven))
	require.NoError(t, restarted.push(ctx, redriven))
	require.NoError(t, restarted.shutdown(ctx))

	var ids []any
	want := map[string]int{}
	for _, c := range cases {
		want[c.CaseID] = 1
		ids = append(ids, c.CaseID)
	}
	want[changed.CaseID] = 2 // the re-drive with other content
	assert.Equal(t, want, rowsByID(t, cfg.Directory))
	metadatatest.AssertEqualExporterReplayParquetCasesResent(t, tel, []metricdata.DataPoint[int64]{{Value: int64(len(cases)), Attributes: attribute.NewSet(attribute.String("reason", "redelivered"))}},
		metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
	logged := namedOn(t, stderr(), "delivered again")
	require.Len(t, logged, 1)
	assert.ElementsMatch(t, ids, logged[0])
}
