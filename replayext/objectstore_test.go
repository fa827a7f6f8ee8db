package replayext

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"

	"github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/internal/testfixtures"
)

// uploadFrom writes cases [from, to) into a local root of its own, as the exporter of one host
// would, and uploads that root into the bucket.
func uploadFrom(t *testing.T, cfg dataset.ObjectStoreConfig, from, to int) {
	t.Helper()
	root := filepath.Join(t.TempDir(), "data")
	generateDataset(t, root, from, to, 100)
	st, err := dataset.NewObjectStore(context.Background(), cfg)
	require.NoError(t, err)
	_, err = st.Sync(context.Background(), root)
	require.NoError(t, err)
}

// Two hosts upload into one bucket (with a case delivered to both); the store over the bucket
// indexes every case once, serves each one's content and recorded call, picks up a later
// upload incrementally, and forgets the cases of an object deleted from the bucket.
func TestStoreReadsTheDatasetFromTheObjectStore(t *testing.T) {
	ep, bucket, client := testfixtures.S3Bucket(t)
	cfg := dataset.ObjectStoreConfig{URL: "s3://" + bucket + "/team-a/reprise", Endpoint: ep, Region: "us-east-1", PathStyle: true}
	uploadFrom(t, cfg, 0, 10)
	uploadFrom(t, cfg, 9, 20) // case 9 delivered twice: at-least-once

	src, err := newObjectSource(context.Background(), cfg)
	require.NoError(t, err)
	s := newStoreOf(src, 4)
	added, _, failed := s.refresh(t.Context()).counts()
	require.Empty(t, failed)
	assert.Equal(t, 20, added)
	var want []string
	for i := range 20 {
		want = append(want, fmt.Sprintf("%032x", i))
	}
	assert.Equal(t, want, listAll(s))

	for _, i := range []int{0, 9, 19} {
		rec := syntheticCase(i, 100)
		got, err := s.get(t.Context(), rec.CaseID)
		require.NoError(t, err)
		assert.Equal(t, rec.Steps[0].InputMessages, got.Steps[0].InputMessages)
		id, hits := s.match(requestOf(rec), "", nil)
		require.Equal(t, []hit{{rec.CaseID, 0}}, hits)
		step, err := s.llmStep(t.Context(), hits[0])
		require.NoError(t, err)
		assert.Equal(t, rec.Steps[0].OutputMessages, step.OutputMessages)
		assert.Equal(t, rec.Steps[0].CallSiteID, id)
	}
	many, err := s.summariesOf(t.Context(), []string{want[15], want[2], want[7]})
	require.NoError(t, err)
	assert.Equal(t, []string{want[15], want[2], want[7]}, []string{many[0].CaseID, many[1].CaseID, many[2].CaseID})

	uploadFrom(t, cfg, 20, 25) // a third host, later
	added, _, failed = s.refresh(t.Context()).counts()
	require.Empty(t, failed)
	assert.Equal(t, 5, added)
	assert.True(t, s.has(fmt.Sprintf("%032x", 24)))

	out, err := client.ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String("team-a/reprise/cases/")})
	require.NoError(t, err)
	var first string
	for _, o := range out.Contents {
		if k := aws.ToString(o.Key); first == "" || k < first {
			first = k
		}
	}
	require.True(t, strings.HasSuffix(first, ".parquet"), first)
	_, err = client.DeleteObject(context.Background(), &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(first)})
	require.NoError(t, err)
	s.refresh(t.Context()) // lists the bucket: the object is gone
	s.refresh(t.Context()) // forgets its cases
	assert.Less(t, len(listAll(s)), 25)
	for _, id := range listAll(s) {
		_, err := s.get(t.Context(), id)
		require.NoError(t, err, "every listed case is readable")
	}
}

// A bucket that cannot be listed is a refresh failure that is reported, never an empty listing
// that would forget what was indexed.
func TestObjectSourceListingFailureKeepsTheIndex(t *testing.T) {
	ep, bucket, client := testfixtures.S3Bucket(t)
	cfg := dataset.ObjectStoreConfig{URL: "s3://" + bucket, Endpoint: ep, Region: "us-east-1", PathStyle: true}
	uploadFrom(t, cfg, 0, 3)
	src, err := newObjectSource(context.Background(), cfg)
	require.NoError(t, err)
	s := newStoreOf(src, 4)
	added, _, _ := s.refresh(t.Context()).counts()
	require.Equal(t, 3, added)

	ctx := context.Background()
	out, err := client.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	require.NoError(t, err)
	for _, o := range out.Contents {
		_, err := client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: o.Key})
		require.NoError(t, err)
	}
	_, err = client.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String(bucket)})
	require.NoError(t, err)
	_, _, failed := s.refresh(t.Context()).counts()
	require.Contains(t, failed, "")
	assert.ErrorContains(t, failed[""], "listing s3://"+bucket)
	s.refresh(t.Context())
	assert.Len(t, listAll(s), 3)
}

func TestObjectStoreConfig(t *testing.T) {
	cfg, err := loadConfig(t, "object_store")
	require.NoError(t, err)
	require.NoError(t, confmap.Validate(cfg))
	require.True(t, cfg.ObjectStore.HasValue())
	assert.Equal(t, dataset.ObjectStoreConfig{URL: "s3://reprise-datasets/team-a", Endpoint: "http://127.0.0.1:9000", Region: "eu-west-1", PathStyle: true}, *cfg.ObjectStore.Get())
	assert.Equal(t, "s3://reprise-datasets/team-a", cfg.location())

	bad, err := loadConfig(t, "bad_object_store")
	require.NoError(t, err)
	// Once: the collector validates the object_store block itself.
	assert.EqualError(t, confmap.Validate(bad), `object_store: url "gs://reprise-datasets/team-a": want s3://bucket[/prefix]`)
	def, err := loadConfig(t, "")
	require.NoError(t, err)
	assert.False(t, def.ObjectStore.HasValue(), "the local directory by default")
}
