package dataset

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sort"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/parquet-go/parquet-go"
)

// ObjectFile is one data file in the bucket.
type ObjectFile struct {
	Dataset   string // Cases, Steps or Quarantine
	Partition string // the dt value, YYYY-MM-DD
	Key       string // the object key
	Size      int64
}

// List lists the data files of one dataset in the bucket, in key order (within a day, UUIDv7
// names sort by creation time). Keys that are not data files are skipped.
func (s *ObjectStore) List(ctx context.Context, dataset string) ([]ObjectFile, error) {
	objs, err := s.listKeys(ctx, s.Key(dataset+"/"))
	if err != nil {
		return nil, err
	}
	var out []ObjectFile
	for _, o := range objs {
		ds, day, ok := isDataFile(s.relKey(o.key))
		if !ok || ds != dataset {
			continue
		}
		out = append(out, ObjectFile{Dataset: ds, Partition: day, Key: o.key, Size: o.size})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

// objectReader reads an object with ranged GETs, so that a Parquet reader fetches the footer
// and the column chunks it needs instead of the whole file.
type objectReader struct {
	ctx    context.Context
	client *s3.Client
	bucket string
	key    string
	size   int64
}

func (r *objectReader) ReadAt(p []byte, off int64) (int, error) {
	if off >= r.size {
		return 0, io.EOF
	}
	end := off + int64(len(p)) - 1
	if end >= r.size {
		end = r.size - 1
	}
	out, err := r.client.GetObject(r.ctx, &s3.GetObjectInput{
		Bucket: aws.String(r.bucket), Key: aws.String(r.key), Range: aws.String(fmt.Sprintf("bytes=%d-%d", off, end)),
	})
	if err != nil {
		if objectMissing(err) {
			// Deleted since it was listed (retention, an operator): wrapped as a removed local
			// file's error is, so that callers take the same path for both.
			return 0, fmt.Errorf("reading s3://%s/%s: %w: %w", r.bucket, r.key, fs.ErrNotExist, err)
		}
		return 0, fmt.Errorf("reading s3://%s/%s: %w", r.bucket, r.key, err)
	}
	defer out.Body.Close()
	n, err := io.ReadFull(out.Body, p[:end-off+1])
	if err != nil {
		return n, fmt.Errorf("reading s3://%s/%s: %w", r.bucket, r.key, err)
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// objectMissing reports whether err is S3's answer for a key the bucket does not hold: a GET's
// NoSuchKey, or NotFound, the code the SDK gives a 404 without a body (a HEAD, or a server that
// sends none). Other 404s (NoSuchBucket) are not: a missing or misnamed bucket must not make
// every file of the dataset look deleted.
func objectMissing(err error) bool {
	var coded interface{ ErrorCode() string } // smithy.APIError, without depending on smithy-go
	if !errors.As(err, &coded) {
		return false
	}
	code := coded.ErrorCode()
	return code == "NoSuchKey" || code == "NotFound"
}

// OpenObject opens a data file in the bucket for reading, checking its schema version.
func (s *ObjectStore) OpenObject(ctx context.Context, f ObjectFile) (*parquet.File, error) {
	df, err := s.openObject(ctx, f)
	return df.pf, err
}

func (s *ObjectStore) openObject(ctx context.Context, f ObjectFile) (dataFile, error) {
	df, err := openFile(&objectReader{ctx: ctx, client: s.client, bucket: s.bucket, key: f.Key, size: f.Size}, f.Size)
	if err != nil {
		return dataFile{}, fmt.Errorf("s3://%s/%s: %w", s.bucket, f.Key, err)
	}
	return df, nil
}

// ReadObjectCases reads every row of a cases/ or quarantine/ file in the bucket.
func (s *ObjectStore) ReadObjectCases(ctx context.Context, f ObjectFile) ([]CaseRow, error) {
	return readObject[CaseRow](ctx, s, f)
}

// ReadObjectSteps reads every row of a steps/ file in the bucket.
func (s *ObjectStore) ReadObjectSteps(ctx context.Context, f ObjectFile) ([]StepRow, error) {
	return readObject[StepRow](ctx, s, f)
}

// ReadObjectIndex reads the index entries of a cases/ or quarantine/ file in the bucket.
func (s *ObjectStore) ReadObjectIndex(ctx context.Context, f ObjectFile) ([]IndexEntry, error) {
	out, err := readIndex(&objectReader{ctx: ctx, client: s.client, bucket: s.bucket, key: f.Key, size: f.Size}, f.Size)
	if err != nil {
		return nil, fmt.Errorf("s3://%s/%s: %w", s.bucket, f.Key, err)
	}
	return out, nil
}

func readObject[T any](ctx context.Context, s *ObjectStore, f ObjectFile) ([]T, error) {
	df, err := s.openObject(ctx, f)
	if err != nil {
		return nil, err
	}
	rows, err := readEveryRow[T](df)
	if err != nil {
		return nil, fmt.Errorf("s3://%s/%s: %w", s.bucket, f.Key, err)
	}
	return rows, nil
}
