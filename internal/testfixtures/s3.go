package testfixtures

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// S3Bucket creates a fresh bucket on the S3-compatible server test/objectstore/run.sh started
// (REPRISE_S3_ENDPOINT) and returns the server's endpoint, the bucket's name and a client of
// it. Without that server the test is skipped.
func S3Bucket(t testing.TB) (endpoint, bucket string, client *s3.Client) {
	t.Helper()
	endpoint = os.Getenv("REPRISE_S3_ENDPOINT")
	if endpoint == "" {
		t.Skip("REPRISE_S3_ENDPOINT not set: run test/objectstore/run.sh, which starts a local S3 server")
	}
	ctx := context.Background()
	awsCfg, err := awsconfig.LoadDefaultConfig(ctx, awsconfig.WithRegion("us-east-1"))
	if err != nil {
		t.Fatal(err)
	}
	client = s3.NewFromConfig(awsCfg, func(o *s3.Options) { o.BaseEndpoint = aws.String(endpoint); o.UsePathStyle = true })
	bucket = fmt.Sprintf("reprise-test-%d", time.Now().UnixNano())
	if _, err := client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatalf("creating bucket %s: %v", bucket, err)
	}
	return endpoint, bucket, client
}
