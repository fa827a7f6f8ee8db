package replayparquetreceiver

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/internal/testdataset"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/internal/teststorage"
	"github.com/reprise-dev/reprise/receiver/replayparquetreceiver/internal/metadatatest"
)

// captureAndUpload captures runs into a local root of its own, as the collector of one host
// would, and uploads that root into the bucket; it returns the root.
func captureAndUpload(t *testing.T, cfg dataset.ObjectStoreConfig, first, n int) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "data")
	capture(t, root, testfixtures.OTelEvents, first, n, strict)
	st, err := dataset.NewObjectStore(context.Background(), cfg)
	require.NoError(t, err)
	_, err = st.Sync(context.Background(), root)
	require.NoError(t, err)
	return root
}

// Two hosts upload into one bucket; the receiver with object_store reads both hosts' cases from
// the bucket, names their provenance by the path under the root (as for a local directory), and
// in watch mode picks up a third host's later upload.
func TestReceiverReadsTheDatasetFromTheObjectStore(t *testing.T) {
	ep, bucket, _ := testfixtures.S3Bucket(t)
	store := dataset.ObjectStoreConfig{URL: "s3://" + bucket + "/team-a", Endpoint: ep, Region: "us-east-1", PathStyle: true}
	hosts := []string{captureAndUpload(t, store, 1, 2), captureAndUpload(t, store, 3, 2)}

	dst := filepath.Join(t.TempDir(), "dst")
	host, ext := teststorage.Start(t, t.TempDir())
	exp := testdataset.Writer(t, dst, "zstd")
	rcv, r := newTestReceiver(t, receivertest.NewNopSettings(NewFactory().Type()), "", func(c *Config) {
		c.ObjectStore = configoptional.Some(store)
		c.Emit, c.Mode, c.PollInterval = EmitCases, ModeWatch, 20*time.Millisecond
		c.Select.Datasets = []string{dataset.Cases}
	}, exp, nil)
	require.NoError(t, rcv.Start(context.Background(), host))
	waitBacklog(t, r)
	hosts = append(hosts, captureAndUpload(t, store, 5, 1))
	require.Eventually(t, func() bool { return len(rowsOf(t, dst, dataset.Cases)) == 5 }, 30*time.Second, 20*time.Millisecond)
	require.NoError(t, rcv.Shutdown(context.Background()))
	require.NoError(t, exp.Shutdown(context.Background()))
	require.NoError(t, ext.Shutdown(context.Background()))

	want := map[string]string{} // case id → the file under the root it was written to
	for _, h := range hosts {
		for _, row := range rowsOf(t, h, dataset.Cases) {
			rel, err := filepath.Rel(h, row.file)
			require.NoError(t, err)
			want[row.c.CaseID] = filepath.ToSlash(rel)
		}
	}
	require.Len(t, want, 5)
	got := rowsOf(t, dst, dataset.Cases)
	require.Len(t, got, 5)
	for _, row := range got {
		from, ok := want[row.c.CaseID]
		require.True(t, ok, row.c.CaseID)
		file, _, _ := strings.Cut(row.c.Metadata[MetaRedrivenFrom], "#")
		assert.Equal(t, from, file, "provenance names the file by its path under the root")
	}
}

// Once mode lists the bucket only at start, so an object deleted after that listing is still in
// it: its 404 must be taken as a removed file (logged once and left, as for a local directory),
// not as a read error retried at every poll, which would keep the backlog from ever being done.
func TestObjectStoreOnceModeLeavesAnObjectDeletedAfterListing(t *testing.T) {
	ep, bucket, client := testfixtures.S3Bucket(t)
	store := dataset.ObjectStoreConfig{URL: "s3://" + bucket + "/team-a", Endpoint: ep, Region: "us-east-1", PathStyle: true}
	captureAndUpload(t, store, 1, 2)
	time.Sleep(5 * time.Millisecond) // the second host's file is named (UUIDv7) and so read after the first's
	second := captureAndUpload(t, store, 3, 2)
	files, err := dataset.NewLister(second, dataset.Cases).Next()
	require.NoError(t, err)
	require.Len(t, files, 1)
	rel, err := filepath.Rel(second, files[0].Path)
	require.NoError(t, err)
	key := "team-a/" + filepath.ToSlash(rel)

	// The second file is deleted while the first one's cases are pushed: after the listing,
	// before the receiver opens it.
	var deleteOnce sync.Once
	next, err := consumer.NewTraces(func(ctx context.Context, _ ptrace.Traces) error {
		deleteOnce.Do(func() {
			_, err := client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
			assert.NoError(t, err)
		})
		return nil
	})
	require.NoError(t, err)
	tt := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tt.Shutdown(context.Background())) })
	core, logs := observer.New(zap.InfoLevel)
	set := metadatatest.NewSettings(tt)
	set.Logger = zap.New(core)
	host, ext := teststorage.Start(t, t.TempDir())
	rcv, r := newTestReceiver(t, set, "", func(c *Config) {
		c.ObjectStore = configoptional.Some(store)
		c.Emit, c.PollInterval = EmitCases, 20*time.Millisecond
		c.Select.Datasets = []string{dataset.Cases}
	}, next, nil)
	require.NoError(t, rcv.Start(context.Background(), host))
	select {
	case <-r.backlogDone:
	case <-time.After(10 * time.Second): // 500 polls
		t.Error("the backlog is not done: the deleted object is retried as a read error")
	}
	require.NoError(t, rcv.Shutdown(context.Background()))
	require.NoError(t, ext.Shutdown(context.Background()))

	removed := logs.FilterMessage("a data file was removed before it was read; its rows are not emitted").All()
	require.Len(t, removed, 1, "logged once")
	assert.Equal(t, "s3://"+bucket+"/"+key, removed[0].ContextMap()["file"])
	assert.Empty(t, logs.FilterLevelExact(zap.ErrorLevel).All(), "no read error")
	assert.Len(t, logs.FilterMessageSnippet("backlog done").All(), 1)
	metadatatest.AssertEqualReceiverReplayParquetCasesEmitted(t, tt, []metricdata.DataPoint[int64]{{Value: 2}}, metricdatatest.IgnoreTimestamp())
	metadatatest.AssertEqualReceiverReplayParquetFilesSkipped(t, tt, []metricdata.DataPoint[int64]{
		{Value: 1, Attributes: attribute.NewSet(attribute.String("dataset", "cases"), attribute.String("reason", "removed"))},
	}, metricdatatest.IgnoreTimestamp())
}

func TestObjectStoreConfig(t *testing.T) {
	cfg := loadConfig(t, "object_store")
	require.NoError(t, confmap.Validate(cfg))
	require.True(t, cfg.ObjectStore.HasValue())
	assert.Equal(t, dataset.ObjectStoreConfig{URL: "s3://reprise-datasets/team-a", Endpoint: "http://127.0.0.1:9000", Region: "eu-west-1", PathStyle: true}, *cfg.ObjectStore.Get())
	assert.Empty(t, cfg.Directory, "no directory needed with object_store")
	assert.False(t, loadConfig(t, "").ObjectStore.HasValue(), "the local directory by default")
	// Once: the collector validates the object_store block itself.
	assert.EqualError(t, confmap.Validate(loadConfig(t, "bad_object_store")), `object_store: url "gs://reprise-datasets/team-a": want s3://bucket[/prefix]`)
}
