package replayparquetexporter

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/exporter/replayparquetexporter/internal/metadatatest"
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

// A merge that flush commits but cannot publish is published by a later write, in no result of
// that write: flush must have the next upload look for its files, as push does, so that the
// bucket holds them while the exporter runs, not only after shutdown (run by
// test/objectstore/run.sh).
func TestFilesOfACommittedFlushUploadsWithTheNextWrite(t *testing.T) {
	ep, bucket, client := testfixtures.S3Bucket(t)
	ctx := context.Background()
	td1, _ := caseSpans(t, testfixtures.OTelEvents)
	td2, _ := caseSpans(t, testfixtures.Traceloop)
	cfg := testConfig(t)
	cfg.FileMaxAge, cfg.FileMaxStagedSize = time.Minute, 1 // every push is due
	cfg.ObjectStore = configoptional.Some(dataset.ObjectStoreConfig{URL: "s3://" + bucket + "/p", Endpoint: ep, Region: "us-east-1", PathStyle: true})
	exp := newObserved(t, cfg)
	block := filepath.Join(cfg.Directory, dataset.Cases) // a file where cases/ goes: publishing stops there
	require.NoError(t, os.WriteFile(block, nil, 0o644))
	require.NoError(t, exp.ConsumeTraces(ctx, td1)) // staged; its merge commits, and cannot publish cases/
	failed := exp.logs.FilterMessageSnippet("staged cases could not be published yet").All()
	require.Len(t, failed, 1)
	require.Contains(t, failed[0].ContextMap()["error"], dataset.ErrCommitted.Error())
	require.NoError(t, os.Remove(block))

	require.NoError(t, exp.ConsumeTraces(ctx, td2)) // publishes the first merge, then its own
	local := files(t, cfg.Directory)
	require.Len(t, local, 4, "cases/ and steps/ of each merge")
	assert.Equal(t, local, bucketFiles(t, client, bucket, "p"), "every published file is uploaded while the exporter runs")
	require.NoError(t, exp.Shutdown(ctx))
}

// A staged segment that cannot be read is set aside, named at error level, and the other
// segments are published at the next flush.
func TestAnUnreadableSegmentIsLoggedAndTheOthersPublished(t *testing.T) {
	ctx := context.Background()
	td1, _ := caseSpans(t, testfixtures.OTelEvents)
	td2, _ := caseSpans(t, testfixtures.Traceloop)
	cfg := testConfig(t)
	cfg.FileMaxAge = time.Minute // published at shutdown
	exp := newObserved(t, cfg)
	require.NoError(t, exp.ConsumeTraces(ctx, td1))
	staged := files(t, cfg.staging())
	var segment string
	for _, f := range staged {
		if dir, name, _ := strings.Cut(filepath.ToSlash(f), "/"); strings.HasPrefix(name, dataset.Cases+"-") {
			segment = dir
			require.NoError(t, os.Truncate(filepath.Join(cfg.staging(), f), 100))
		}
	}
	require.NotEmpty(t, segment, "staged: %v", staged)
	require.NoError(t, exp.ConsumeTraces(ctx, td2))
	require.NoError(t, exp.Shutdown(ctx))

	logged := exp.logs.FilterMessageSnippet("a staged segment cannot be read").All()
	require.Len(t, logged, 1)
	assert.Equal(t, filepath.Join(cfg.staging(), "unreadable-"+segment), logged[0].ContextMap()["segment"])
	assert.DirExists(t, filepath.Join(cfg.staging(), "unreadable-"+segment), "set aside, not deleted")
	assert.Len(t, readAll[replaycase.Case](t, cfg.Directory, dataset.Cases), 1, "the other batch is published")
	// Counted, not only logged: its rows are in no file of the dataset (before 2026-12-07 no
	// metric said so).
	metadatatest.AssertEqualExporterReplayParquetRowsSetAside(t, exp.tel, []metricdata.DataPoint[int64]{
		{Value: 1, Attributes: attribute.NewSet(attribute.String("dataset", dataset.Cases))},
	}, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
	assert.Equal(t, int64(1), logged[0].ContextMap()["rows"], "the rows set aside")
}
