package replayparquetexporter

import (
	"context"
	"path/filepath"
	"sort"
	"testing"

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

	err := confmap.Validate(loadConfig(t, "bad_object_store"))
	require.Error(t, err)
	assert.ErrorContains(t, err, `object_store: url "gs://reprise-datasets/team-a": want s3://bucket[/prefix]`)
}

// The exporter with object_store publishes every file locally and in the bucket, under the
// same relative path below the prefix (run by test/objectstore/run.sh, which starts an S3 server).
func TestExporterUploadsEveryPublishedFile(t *testing.T) {
	ep, bucket, client := testfixtures.S3Bucket(t)
	ctx := context.Background()

	cfg := testConfig(t)
	cfg.ObjectStore = configoptional.Some(dataset.ObjectStoreConfig{URL: "s3://" + bucket + "/reprise", Endpoint: ep, Region: "us-east-1", PathStyle: true})
	pipeline(t, cfg, testfixtures.OTelEvents, testfixtures.Traceloop, testfixtures.OTelNoContent)

	local := files(t, cfg.Directory)
	require.NotEmpty(t, local)
	out, err := client.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	require.NoError(t, err)
	var remote []string
	for _, o := range out.Contents {
		rel, err := filepath.Rel("reprise", aws.ToString(o.Key))
		require.NoError(t, err)
		remote = append(remote, rel)
	}
	sort.Strings(remote)
	assert.Equal(t, local, remote)
}
