package replayext

import (
	"context"
	"encoding/xml"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/extension/extensiontest"

	"github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/replayext/internal/metadata"
)

// fakeBucket is an S3 endpoint over a local dataset root, as bucket "b" under prefix "p": just
// what the extension asks of a bucket, ListObjectsV2 and ranged GETs. Once stalled, it takes
// requests and never answers them, as a stalled S3 endpoint does.
type fakeBucket struct {
	*httptest.Server
	root    string
	stall   atomic.Bool
	held    atomic.Int32 // requests stalled so far
	release chan struct{}
	// releaseAll ends the stalled requests, once: before the server closes, which waits for
	// them, and before a test's own cleanup shuts an extension down that may wait for them.
	releaseAll func()
}

func startBucket(t *testing.T, root string) *fakeBucket {
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	b := &fakeBucket{root: root, release: make(chan struct{})}
	b.releaseAll = sync.OnceFunc(func() { close(b.release) })
	b.Server = httptest.NewServer(http.HandlerFunc(b.serve))
	t.Cleanup(b.Close)
	t.Cleanup(b.releaseAll)
	return b
}

func (b *fakeBucket) serve(w http.ResponseWriter, r *http.Request) {
	if b.stall.Load() {
		b.held.Add(1)
		select {
		case <-r.Context().Done():
		case <-b.release:
		}
		return
	}
	if r.URL.Path == "/b" || r.URL.Path == "/b/" {
		b.list(w, r.URL.Query().Get("prefix"))
		return
	}
	rel, ok := strings.CutPrefix(r.URL.Path, "/b/p/")
	f, err := os.Open(filepath.Join(b.root, filepath.FromSlash(rel)))
	if !ok || err != nil {
		http.Error(w, "<Error><Code>NoSuchKey</Code></Error>", http.StatusNotFound)
		return
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	http.ServeContent(w, r, rel, info.ModTime(), f) // answers the Range header
}

func (b *fakeBucket) list(w http.ResponseWriter, prefix string) {
	type object struct {
		Key  string
		Size int64
	}
	out := struct {
		XMLName     xml.Name `xml:"http://s3.amazonaws.com/doc/2006-03-01/ ListBucketResult"`
		Name        string
		Prefix      string
		KeyCount    int
		IsTruncated bool
		Contents    []object
	}{Name: "b", Prefix: prefix}
	_ = filepath.WalkDir(b.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(b.root, p)
		info, err := d.Info()
		if key := "p/" + filepath.ToSlash(rel); err == nil && strings.HasPrefix(key, prefix) {
			out.Contents = append(out.Contents, object{key, info.Size()})
		}
		return nil
	})
	out.KeyCount = len(out.Contents)
	w.Header().Set("Content-Type", "application/xml")
	_ = xml.NewEncoder(w).Encode(out)
}

// stallNow stalls the bucket and waits until a request is held.
func (b *fakeBucket) stallNow(t *testing.T) {
	b.stall.Store(true)
	b.waitHeldPast(t, b.held.Load())
}

// waitHeldPast waits until more than held requests have been stalled. Callers that start the
// request themselves take held before starting it: counted after, the request may already be
// in it and no further one come.
func (b *fakeBucket) waitHeldPast(t *testing.T, held int32) {
	require.Eventually(t, func() bool { return b.held.Load() > held }, 10*time.Second, 10*time.Millisecond, "a request reaches the stalled bucket")
}

// newBucketReplay is the extension over the fake bucket, not started, with the deadlines of
// a refresh and of a read given.
func newBucketReplay(t *testing.T, b *fakeBucket, refresh, read time.Duration) *replay {
	cfg := createDefaultConfig().(*Config)
	cfg.NetAddr.Endpoint = "127.0.0.1:0"
	cfg.RefreshInterval = 50 * time.Millisecond
	cfg.ObjectStore = configoptional.Some(dataset.ObjectStoreConfig{URL: "s3://b/p", Endpoint: b.URL, Region: "us-east-1", PathStyle: true})
	require.NoError(t, cfg.Validate())
	ext, err := NewFactory().Create(t.Context(), extensiontest.NewNopSettings(metadata.Type), cfg)
	require.NoError(t, err)
	r := ext.(*replay)
	r.refreshTimeout = refresh
	r.store.src.(*objectSource).readTimeout = read
	return r
}

// startStallableReplay starts the extension over a fake bucket holding the dataset at root and
// returns the bucket (to stall it) and a client. Reads have a deadline of 10 s until the test
// calls shortReads: a first read through the AWS SDK under -race takes about 280 ms on an idle
// machine, and more under load, so a 300 ms deadline from the start failed the reads meant to
// succeed.
func startStallableReplay(t *testing.T, root string) (*fakeBucket, *server) {
	b := startBucket(t, root)
	r := newBucketReplay(t, b, time.Minute, 10*time.Second)
	require.NoError(t, r.Start(t.Context(), componenttest.NewNopHost()))
	t.Cleanup(func() {
		b.releaseAll()
		_ = r.Shutdown(context.Background())
	})
	return b, &server{t: t, base: "http://" + r.addr.String(), ext: r}
}

// shortReads gives the extension's reads of the bucket a deadline of 300 ms, once the reads
// meant to succeed are done: a stalled read then ends within the test's time.
func shortReads(s *server) { s.ext.store.src.(*objectSource).readTimeout = 300 * time.Millisecond }

// within runs fn and fails the test when it has not returned after d.
func within(t *testing.T, d time.Duration, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s still blocked after %s on a stalled object store", what, d)
	}
}

// A stalled object store does not hold Start: the refresh's deadline ends it, the extension
// serves what it could index (nothing), and a later refresh, once the store answers, indexes
// the files the stalled one did not read.
func TestAStalledObjectStoreDoesNotHoldStart(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	cases := writeDataset(t, root, testfixtures.OTelEvents)
	b := startBucket(t, root)
	b.stall.Store(true)
	r := newBucketReplay(t, b, 300*time.Millisecond, time.Hour)
	within(t, 10*time.Second, "Start", func() { assert.NoError(t, r.Start(t.Context(), componenttest.NewNopHost())) })
	t.Cleanup(func() { assert.NoError(t, r.Shutdown(context.Background())) })
	assert.Empty(t, listAll(r.store))
	b.stall.Store(false)
	require.Eventually(t, func() bool { return r.store.has(cases[0].CaseID) }, 10*time.Second, 20*time.Millisecond)
}

// A stalled object store does not hold Shutdown: it ends a refresh under way at once, however
// far the refresh's deadline is.
func TestAStalledObjectStoreDoesNotHoldShutdown(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	cases := writeDataset(t, root, testfixtures.OTelEvents)
	b := startBucket(t, root)
	r := newBucketReplay(t, b, time.Hour, time.Hour)
	require.NoError(t, r.Start(t.Context(), componenttest.NewNopHost()))
	require.True(t, r.store.has(cases[0].CaseID))
	b.stallNow(t) // a refresh of the loop waits on the bucket
	within(t, 10*time.Second, "Shutdown", func() { assert.NoError(t, r.Shutdown(context.Background())) })
}

// A read of a case from a stalled object store ends at the read's deadline with a 504, for a
// case and for a listing page; and a read that would outlast Shutdown's context is cut short
// there.
func TestAStalledObjectStoreTimesReadsOut(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	cases := writeDataset(t, root, testfixtures.OTelEvents)
	b, s := startStallableReplay(t, root)
	r := s.ext
	resp, body := s.do("GET", "/v1/cases/"+cases[0].CaseID, nil, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, "served while the bucket answers: %s", body)
	r.store.cache.Purge() // the next reads go to the bucket
	shortReads(s)

	b.stall.Store(true)
	client := &http.Client{Timeout: 10 * time.Second} // far past the read's deadline
	for _, path := range []string{"/v1/cases/" + cases[0].CaseID, "/v1/cases"} {
		resp, err := client.Get(s.base + path)
		require.NoError(t, err, "GET %s on a stalled object store", path)
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		assert.Equal(t, http.StatusGatewayTimeout, resp.StatusCode, "%s: %s", path, body)
		assert.NotContains(t, string(body), b.URL, "the answer does not name the store")
	}

	r.store.src.(*objectSource).readTimeout = time.Hour
	held := b.held.Load() // the bucket is still stalled, so the read below is held
	answered := make(chan int, 1)
	go func() {
		req, err := http.NewRequest("GET", s.base+"/v1/cases/"+cases[0].CaseID, nil)
		if err != nil {
			answered <- 0
			return
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			answered <- 0 // Shutdown closed the connection first
			return
		}
		resp.Body.Close()
		answered <- resp.StatusCode
	}()
	b.waitHeldPast(t, held)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	within(t, 10*time.Second, "Shutdown", func() { assert.ErrorIs(t, r.Shutdown(ctx), context.DeadlineExceeded) })
	select {
	case code := <-answered:
		assert.NotEqual(t, http.StatusOK, code)
	case <-time.After(10 * time.Second):
		t.Fatal("the read under way was not ended by Shutdown")
	}
}
