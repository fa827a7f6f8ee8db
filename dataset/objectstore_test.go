package dataset_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	. "github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/internal/testfixtures"
)

func TestParseS3URL(t *testing.T) {
	for raw, want := range map[string][2]string{
		"s3://bucket":              {"bucket", ""},
		"s3://bucket/":             {"bucket", ""},
		"s3://bucket/a/b/":         {"bucket", "a/b"},
		"s3://my-bucket/reprise-1": {"my-bucket", "reprise-1"},
	} {
		b, p, err := ParseS3URL(raw)
		require.NoError(t, err, raw)
		assert.Equal(t, want, [2]string{b, p}, raw)
	}
	for _, raw := range []string{"", "bucket/prefix", "gs://bucket/x", "s3:///prefix", "s3://b/p?versionId=1", "file:///tmp",
		"s3://b/a//c", "s3://b/a/../c", "s3://b/./a", "s3://b/.."} {
		_, _, err := ParseS3URL(raw)
		assert.Error(t, err, raw)
	}
	assert.ErrorContains(t, ObjectStoreConfig{}.Validate(), "url is required")
	assert.ErrorContains(t, ObjectStoreConfig{URL: "s3://b", Endpoint: "127.0.0.1:9000"}.Validate(), "endpoint")
	assert.NoError(t, ObjectStoreConfig{URL: "s3://b/p", Endpoint: "http://127.0.0.1:9000"}.Validate())
}

// newBucket creates a fresh bucket on the test server and returns its config with a prefix.
func newBucket(t *testing.T) (ObjectStoreConfig, *s3.Client) {
	ep, bucket, client := testfixtures.S3Bucket(t)
	return ObjectStoreConfig{URL: "s3://" + bucket + "/team-a/reprise", Endpoint: ep, Region: "us-east-1", PathStyle: true}, client
}

// keys lists every object of the bucket.
func keys(t *testing.T, client *s3.Client, bucket string) []string {
	out, err := client.ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	require.NoError(t, err)
	var ks []string
	for _, o := range out.Contents {
		ks = append(ks, aws.ToString(o.Key))
	}
	sort.Strings(ks)
	return ks
}

// Files published locally are uploaded under <prefix>/<relative path>, nothing else lands in
// the bucket (no staging file, no journal), and the rows read back from the bucket over ranged
// GETs are the rows of the local files.
func TestObjectStoreMirrorsPublishedFilesAndReadsThemBack(t *testing.T) {
	cfg, client := newBucket(t)
	ctx := context.Background()
	w := newWriter(t)
	res, err := w.Write(fixtureCases(t))
	require.NoError(t, err)
	store, err := NewObjectStore(ctx, cfg)
	require.NoError(t, err)
	var files []File
	for _, f := range res.Files {
		files = append(files, f.File)
	}
	require.NoError(t, store.Upload(ctx, w.Root(), files))

	bucket, _, _ := ParseS3URL(cfg.URL)
	var want []string
	for _, rel := range tree(t, w.Root()) {
		want = append(want, "team-a/reprise/"+rel)
	}
	assert.Equal(t, want, keys(t, client, bucket), "the bucket holds exactly the published files")

	for _, ds := range []string{Cases, Quarantine, Steps} {
		local, localSteps := readDataset(t, w.Root(), ds)
		objs, err := store.List(ctx, ds)
		require.NoError(t, err)
		require.NotEmpty(t, objs, ds)
		var remote []CaseRow
		var remoteSteps []StepRow
		for _, o := range objs {
			assert.Equal(t, ds, o.Dataset)
			assert.Regexp(t, `^\d{4}-\d{2}-\d{2}$`, o.Partition)
			if ds == Steps {
				rows, err := store.ReadObjectSteps(ctx, o)
				require.NoError(t, err)
				remoteSteps = append(remoteSteps, rows...)
				continue
			}
			rows, err := store.ReadObjectCases(ctx, o)
			require.NoError(t, err)
			remote = append(remote, rows...)
			index, err := store.ReadObjectIndex(ctx, o)
			require.NoError(t, err)
			require.Len(t, index, len(rows))
			for i := range rows {
				assert.Equal(t, rows[i].CaseID, index[i].CaseID)
			}
		}
		assert.Equal(t, local, remote, ds)
		assert.Equal(t, localSteps, remoteSteps, ds)
	}
}

// A collector that died after publishing locally and before uploading uploads those files at
// its next start (Sync), and only those: what the bucket already holds is not sent again.
func TestObjectStoreSyncUploadsWhatACrashLeftLocal(t *testing.T) {
	cfg, client := newBucket(t)
	ctx := context.Background()
	bucket, _, _ := ParseS3URL(cfg.URL)
	w := newWriter(t)
	first, err := NewObjectStore(ctx, cfg)
	require.NoError(t, err)
	n, err := first.Sync(ctx, w.Root())
	require.NoError(t, err)
	assert.Zero(t, n, "an empty root uploads nothing")

	res, err := w.Write(fixtureCases(t))
	require.NoError(t, err)
	var files []File
	for _, f := range res.Files {
		files = append(files, f.File)
	}
	require.NoError(t, first.Upload(ctx, w.Root(), files))
	uploaded := len(keys(t, client, bucket))

	// Published locally, then the process died before the upload.
	res2, err := w.Write(fixtureCases(t))
	require.NoError(t, err)
	assert.Len(t, keys(t, client, bucket), uploaded)

	restarted, err := NewObjectStore(ctx, cfg)
	require.NoError(t, err)
	n, err = restarted.Sync(ctx, w.Root())
	require.NoError(t, err)
	assert.Equal(t, len(res2.Files), n, "exactly the files the crash left local")
	assert.Len(t, keys(t, client, bucket), uploaded+len(res2.Files))
	n, err = restarted.Sync(ctx, w.Root())
	require.NoError(t, err)
	assert.Zero(t, n, "nothing twice")
}

// An upload that fails (here: the bucket does not exist yet) is reported, and the next Sync
// uploads the file once the bucket is reachable.
func TestObjectStoreRetriesAFailedUploadAtTheNextSync(t *testing.T) {
	cfg, client := newBucket(t)
	ctx := context.Background()
	missing := fmt.Sprintf("reprise-late-%d", time.Now().UnixNano())
	cfg.URL = "s3://" + missing
	store, err := NewObjectStore(ctx, cfg)
	require.NoError(t, err)
	w := newWriter(t)
	res, err := w.Write(fixtureCases(t))
	require.NoError(t, err)
	var files []File
	for _, f := range res.Files {
		files = append(files, f.File)
	}
	err = store.Upload(ctx, w.Root(), files)
	require.Error(t, err)
	assert.True(t, strings.Contains(err.Error(), missing), err.Error())

	_, err = client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(missing)})
	require.NoError(t, err)
	n, err := store.Sync(ctx, w.Root())
	require.NoError(t, err)
	assert.Equal(t, len(res.Files), n)
	assert.Len(t, keys(t, client, missing), len(res.Files))
}
