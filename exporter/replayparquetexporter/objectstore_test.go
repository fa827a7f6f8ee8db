package replayparquetexporter

import (
	"context"
	"net/url"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/confmap"

	"github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/internal/testfixtures"
)

func TestObjectStoreConfig(t *testing.T) {
	cfg := loadConfig(t, "object_store")
	require.NoError(t, confmap.Validate(cfg))
	require.True(t, cfg.ObjectStore.HasValue())
	assert.Equal(t, dataset.ObjectStoreConfig{URL: "s3://reprise-datasets/team-a", Endpoint: "http://127.0.0.1:9000", Region: "eu-west-1", PathStyle: true}, *cfg.ObjectStore.Get())
	assert.False(t, loadConfig(t, "").ObjectStore.HasValue(), "no object store by default")

	// Once: the collector validates the object_store block itself (a Validate that checked it
	// again printed every mistake twice).
	assert.EqualError(t, confmap.Validate(loadConfig(t, "bad_object_store")), `object_store: url "gs://reprise-datasets/team-a": want s3://bucket[/prefix]`)
}

// The exporter with object_store publishes every file locally and in the bucket, under the
// same relative path below the prefix (run by test/objectstore/run.sh, which starts an S3 server).
func TestExporterUploadsEveryPublishedFile(t *testing.T) {
	ep, bucket, client := testfixtures.S3Bucket(t)
	cfg := testConfig(t)
	cfg.ObjectStore = configoptional.Some(dataset.ObjectStoreConfig{URL: "s3://" + bucket + "/reprise", Endpoint: ep, Region: "us-east-1", PathStyle: true})
	pipeline(t, cfg, testfixtures.OTelEvents, testfixtures.Traceloop, testfixtures.OTelNoContent)

	local := files(t, cfg.Directory)
	require.NotEmpty(t, local)
	assert.Equal(t, local, bucketFiles(t, client, bucket, "reprise"))
}

// bucketFiles lists the keys under prefix in the bucket, relative to it and sorted.
func bucketFiles(t *testing.T, client *s3.Client, bucket, prefix string) []string {
	t.Helper()
	out, err := client.ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	require.NoError(t, err)
	var remote []string
	for _, o := range out.Contents {
		rel, err := filepath.Rel(prefix, aws.ToString(o.Key))
		require.NoError(t, err)
		remote = append(remote, rel)
	}
	sort.Strings(remote)
	return remote
}

// directory: s3://bucket/prefix is the same mirror as an object_store block: every file is
// published in local_directory and uploaded under the prefix (run by test/objectstore/run.sh).
func TestExporterWithAnS3DirectoryUploadsEveryPublishedFile(t *testing.T) {
	ep, bucket, client := testfixtures.S3Bucket(t)
	ctx := context.Background()

	cfg := testConfig(t)
	local := cfg.Directory
	cfg.Directory, cfg.LocalDirectory = "s3://"+bucket+"/team-a?endpoint="+url.QueryEscape(ep)+"&region=us-east-1&use_path_style=true", local
	require.NoError(t, confmap.Validate(cfg))
	emitted := pipeline(t, cfg, testfixtures.OTelEvents, testfixtures.Traceloop, testfixtures.OTelNoContent)

	published := files(t, local)
	require.NotEmpty(t, published)
	assert.Equal(t, published, bucketFiles(t, client, bucket, "team-a"))

	// The bucket holds the dataset: every case emitted reads back from it.
	store, err := dataset.NewObjectStore(ctx, dataset.ObjectStoreConfig{URL: "s3://" + bucket + "/team-a", Endpoint: ep, Region: "us-east-1", PathStyle: true})
	require.NoError(t, err)
	var read []string
	for _, ds := range []string{dataset.Cases, dataset.Quarantine} {
		objs, err := store.List(ctx, ds)
		require.NoError(t, err)
		for _, o := range objs {
			rows, err := store.ReadObjectCases(ctx, o)
			require.NoError(t, err)
			for _, r := range rows {
				read = append(read, r.CaseID)
			}
		}
	}
	var want []string
	for _, c := range emitted {
		want = append(want, c.CaseID)
	}
	assert.ElementsMatch(t, want, read)
}

// Retention with an object store deletes the expired local files the bucket holds: files
// published before this start and never uploaded are uploaded by the start's sync, then deleted
// locally; the bucket keeps them (run by test/objectstore/run.sh).
func TestRetentionDeletesWhatTheBucketHolds(t *testing.T) {
	ep, bucket, client := testfixtures.S3Bucket(t)
	cfg := testConfig(t)
	cfg.ObjectStore = configoptional.Some(dataset.ObjectStoreConfig{URL: "s3://" + bucket + "/reprise", Endpoint: ep, Region: "us-east-1", PathStyle: true})
	pipeline(t, cfg, testfixtures.OTelEvents, testfixtures.OTelNoContent)
	current := files(t, cfg.Directory)
	require.Equal(t, current, bucketFiles(t, client, bucket, "reprise"))
	ageInto(t, cfg.Directory, "2001-01-01") // local only
	aged := files(t, cfg.Directory)

	year := Age(365 * 24 * time.Hour) // the fixture's day stays
	cfg.Retention = RetentionConfig{Cases: year, Quarantine: year, Interval: time.Hour}
	exp := newObserved(t, cfg)
	require.Eventually(t, func() bool { return exp.logs.FilterMessage("retention removed expired data").Len() == 3 }, 30*time.Second, 10*time.Millisecond)
	require.NoError(t, exp.Shutdown(context.Background()))

	assert.Equal(t, current, files(t, cfg.Directory), "the year-old files are deleted locally")
	assert.Equal(t, aged, bucketFiles(t, client, bucket, "reprise"), "once the bucket held them")
	assert.Zero(t, exp.logs.FilterMessage("retention kept expired files the object store does not hold yet; they are deleted once uploaded").Len())
}
