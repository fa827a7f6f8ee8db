package dataset

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// Object store: the dataset root mirrored into an S3 bucket, so that collectors on different
// hosts share one dataset.
//
// A file is first published locally (staging, journal, rename: see publish.go) and only then
// uploaded, with one PutObject, under its final key <prefix>/<dataset>/dt=<day>/<name>.parquet.
// S3 makes an object visible only once its upload is complete, so a reader of the bucket sees a
// file whole or not at all, the same guarantee as the local rename. The local copy stays: it is
// what a failed or interrupted upload is retried from (Sync at start, and after a failure).

// ObjectStoreConfig says where the mirror is. Credentials come from the AWS SDK's default chain
// (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, shared config and credentials files, web identity,
// instance or task roles).
type ObjectStoreConfig struct {
	// URL is s3://bucket[/prefix]. Required.
	URL string `mapstructure:"url"`
	// Endpoint overrides the S3 endpoint (an S3-compatible server such as MinIO, Ceph or a
	// local test server), e.g. http://127.0.0.1:9000. Default: AWS's endpoint for the region.
	Endpoint string `mapstructure:"endpoint"`
	// Region of the bucket. Default: the SDK's (AWS_REGION, shared config), else us-east-1.
	Region string `mapstructure:"region"`
	// PathStyle addresses the bucket as <endpoint>/<bucket> instead of <bucket>.<endpoint>, as
	// most S3-compatible servers need. Default false.
	PathStyle bool `mapstructure:"path_style"`
}

// IsS3URL reports whether a directory setting names a bucket (s3://…) rather than a folder.
func IsS3URL(directory string) bool {
	return strings.HasPrefix(strings.ToLower(directory), "s3://")
}

// RefuseS3URL is the error of a component that reads only a folder from directory and a
// bucket from object_store, given an s3:// URL: read as a local path it would name a folder
// that never appears, and the component would find no file without a word.
func RefuseS3URL(directory string) error {
	if !IsS3URL(directory) {
		return nil
	}
	return fmt.Errorf("directory %q is a bucket URL: read a bucket with object_store (url, endpoint, region, path_style)", directory)
}

// ParseS3URL splits s3://bucket/prefix into bucket and prefix (without surrounding slashes).
func ParseS3URL(raw string) (bucket, prefix string, err error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", "", fmt.Errorf("url %q: %w", raw, err)
	}
	if u.Scheme != "s3" || u.Host == "" {
		return "", "", fmt.Errorf("url %q: want s3://bucket[/prefix]", raw)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return "", "", fmt.Errorf("url %q: a query or fragment is not part of an S3 location", raw)
	}
	prefix = strings.Trim(u.Path, "/")
	// S3 stores "a//b" and "a/../b" as keys of their own, but readers of the bucket do not: Arrow's
	// S3 filesystem (pyarrow, Polars) refuses a path with an empty component, and path-cleaning
	// clients read other keys. A dataset under such a prefix would be unreadable for them.
	if prefix != "" && slices.ContainsFunc(strings.Split(prefix, "/"), func(s string) bool { return s == "" || s == "." || s == ".." }) {
		return "", "", fmt.Errorf("url %q: the prefix must not have an empty, '.' or '..' path segment", raw)
	}
	return u.Host, prefix, nil
}

// Validate names the field that is wrong.
func (c ObjectStoreConfig) Validate() error {
	if c.URL == "" {
		return errors.New("url is required (s3://bucket/prefix)")
	}
	if _, _, err := ParseS3URL(c.URL); err != nil {
		return err
	}
	if c.Endpoint != "" {
		if u, err := url.Parse(c.Endpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("endpoint %q: want http(s)://host[:port]", c.Endpoint)
		}
	}
	return nil
}

// ObjectStore reads and writes dataset files in one bucket under one prefix.
type ObjectStore struct {
	client *s3.Client
	bucket string
	prefix string
	// transport holds the bucket's keep-alive connections; Close lets them go, so that a
	// component that shuts down leaves no connection (and no goroutine) behind.
	transport *http.Transport

	// dirty says the next Sync compares the whole root with the bucket: at the start, and after
	// an upload failed. No set of uploaded keys is kept between Syncs: one would grow with every
	// file for as long as the collector runs (and with every key of the bucket at each Sync).
	mu    sync.Mutex
	dirty bool
}

// objectStoreHeaderTimeout bounds the wait for a response's headers once a request is sent: an
// endpoint that accepts the connection and never answers would otherwise hold a read, a listing
// or an upload (and whoever waits for it: a Start, a Shutdown) for ever. It does not bound a
// body being transferred, so large files still download and upload at the network's pace. A
// variable for tests.
var objectStoreHeaderTimeout = time.Minute

// NewObjectStore connects to the bucket of cfg (no request is made yet).
func NewObjectStore(ctx context.Context, cfg ObjectStoreConfig) (*ObjectStore, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	bucket, prefix, _ := ParseS3URL(cfg.URL)
	var opts []func(*awsconfig.LoadOptions) error
	if cfg.Region != "" {
		opts = append(opts, awsconfig.WithRegion(cfg.Region))
	}
	awsCfg, err := awsconfig.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("object store: %w", err)
	}
	if awsCfg.Region == "" {
		awsCfg.Region = "us-east-1"
	}
	// The SDK's default transport settings, in a client of our own so that Close can reach it.
	transport := awshttp.NewBuildableClient().GetTransport()
	transport.ResponseHeaderTimeout = objectStoreHeaderTimeout
	awsCfg.HTTPClient = &http.Client{Transport: transport}
	client := s3.NewFromConfig(awsCfg, func(o *s3.Options) {
		if cfg.Endpoint != "" {
			o.BaseEndpoint = aws.String(cfg.Endpoint)
		}
		o.UsePathStyle = cfg.PathStyle
		// Reads are ranged GETs, which carry no whole-object checksum to validate; uploads
		// still send one (the SDK's default), so the server rejects a corrupted upload.
		o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
	})
	return &ObjectStore{client: client, bucket: bucket, prefix: prefix, transport: transport, dirty: true}, nil
}

// Close closes the store's idle connections to the bucket. The store stays usable: a later
// request opens a new connection.
func (s *ObjectStore) Close() {
	if s != nil {
		s.transport.CloseIdleConnections()
	}
}

// Key is the object key of a file at rel (slash-separated, relative to the dataset root).
func (s *ObjectStore) Key(rel string) string {
	if s.prefix == "" {
		return rel
	}
	return s.prefix + "/" + rel
}

// datasetOrder is the order the files of one batch are merged, published and uploaded in, the
// journal's order: a reader never sees a case row whose steps rows are not there yet.
var datasetOrder = map[string]int{Steps: 0, Quarantine: 1, Cases: 2}

// Upload uploads published files of the dataset rooted at root. A file that fails is retried by
// the next Sync; the error lists it.
func (s *ObjectStore) Upload(ctx context.Context, root string, files []File) error {
	_, err := s.upload(ctx, root, files, nil)
	return err
}

// upload uploads the files whose key is not in skip, and returns how many it uploaded.
func (s *ObjectStore) upload(ctx context.Context, root string, files []File, skip map[string]bool) (int, error) {
	files = append([]File(nil), files...)
	sort.SliceStable(files, func(i, j int) bool { return datasetOrder[files[i].Dataset] < datasetOrder[files[j].Dataset] })
	var errs []error
	n := 0
	for _, f := range files {
		rel, err := filepath.Rel(root, f.Path)
		if err == nil {
			key := s.Key(filepath.ToSlash(rel))
			if skip[key] {
				continue
			}
			err = s.put(ctx, key, f.Path)
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		n++
	}
	if len(errs) > 0 {
		s.Resync()
	}
	return n, errors.Join(errs...)
}

func (s *ObjectStore) put(ctx context.Context, key, file string) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return err
	}
	if _, err := s.client.PutObject(ctx, &s3.PutObjectInput{
		Bucket: aws.String(s.bucket), Key: aws.String(key), Body: f,
		ContentLength: aws.Int64(info.Size()), ContentType: aws.String("application/vnd.apache.parquet"),
	}); err != nil {
		return fmt.Errorf("uploading %s to s3://%s/%s: %w", file, s.bucket, key, err)
	}
	return nil
}

// Resync makes the next Sync compare the whole root with the bucket: files were published that
// no Upload was given (a committed batch finished by a later write or by Close).
func (s *ObjectStore) Resync() {
	s.mu.Lock()
	s.dirty = true
	s.mu.Unlock()
}

// Sync uploads every published file under root that the bucket does not hold yet: files
// published before a crash that came before their upload, and uploads that failed. It lists
// the bucket only on its first call and after a failure. It returns how many files it uploaded.
func (s *ObjectStore) Sync(ctx context.Context, root string) (int, error) {
	// Cleared before listing, not after: an Upload that fails during this Sync, for a file
	// published after the walk below, sets it again for the next Sync.
	s.mu.Lock()
	dirty := s.dirty
	s.dirty = false
	s.mu.Unlock()
	if !dirty {
		return 0, nil
	}
	keys, err := s.listKeys(ctx, s.Key(""))
	if err != nil {
		s.Resync()
		return 0, err
	}
	// The bucket's keys, for this Sync only. A file an Upload sends after the listing may be
	// sent again below: the same bytes under the same key.
	inBucket := make(map[string]bool, len(keys))
	for _, k := range keys {
		inBucket[k.key] = true
	}
	var files []File
	for _, ds := range []string{Steps, Quarantine, Cases} {
		err := filepath.WalkDir(filepath.Join(root, ds), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil
				}
				return err
			}
			if f, ok := fileOf(root, p); ok && !d.IsDir() {
				files = append(files, f)
			}
			return nil
		})
		if err != nil {
			s.Resync()
			return 0, err
		}
	}
	return s.upload(ctx, root, files, inBucket)
}

// Uploaded returns the names of the files of partition dt of a dataset that the bucket holds:
// retention deletes a local file only once its upload is done (Retention.Uploaded). One listing
// of the partition's prefix.
func (s *ObjectStore) Uploaded(ctx context.Context, dataset, dt string) (map[string]bool, error) {
	objs, err := s.listKeys(ctx, s.Key(dataset+"/"+PartitionKey+"="+dt+"/"))
	if err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(objs))
	for _, o := range objs {
		if _, _, ok := isDataFile(s.relKey(o.key)); ok {
			out[path.Base(o.key)] = true
		}
	}
	return out, nil
}

// object is one listed key and its size.
type object struct {
	key  string
	size int64
}

func (s *ObjectStore) listKeys(ctx context.Context, prefix string) ([]object, error) {
	var out []object
	p := s3.NewListObjectsV2Paginator(s.client, &s3.ListObjectsV2Input{Bucket: aws.String(s.bucket), Prefix: aws.String(prefix)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("listing s3://%s/%s: %w", s.bucket, prefix, err)
		}
		for _, o := range page.Contents {
			out = append(out, object{key: aws.ToString(o.Key), size: aws.ToInt64(o.Size)})
		}
	}
	return out, nil
}

// relKey is key relative to the prefix, in the dataset/dt=day/name.parquet form of a local root.
func (s *ObjectStore) relKey(key string) string {
	if s.prefix == "" {
		return key
	}
	return strings.TrimPrefix(key, s.prefix+"/")
}

// isDataFile reports whether rel is <dataset>/dt=<day>/<name>.parquet.
func isDataFile(rel string) (dataset, day string, ok bool) {
	parts := strings.Split(rel, "/")
	if len(parts) != 3 || !strings.HasPrefix(parts[1], PartitionKey+"=") || path.Ext(parts[2]) != ".parquet" {
		return "", "", false
	}
	return parts[0], strings.TrimPrefix(parts[1], PartitionKey+"="), true
}
