package dataset_test

import (
	"context"
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	. "github.com/reprise-dev/reprise/dataset"
)

// A read of an object the bucket no longer holds fails with an error that wraps fs.ErrNotExist,
// as a removed local file's does, and keeps S3's message; other errors, a missing bucket's
// included, do not. The server answers as S3 does, so this runs without an S3 server.
func TestObjectReadOfADeletedObjectIsNotExist(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	s3Error := func(status int, code string) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(status)
			if code != "" {
				_, _ = w.Write([]byte("<Error><Code>" + code + "</Code><Message>" + code + " (test)</Message></Error>"))
			}
		}
	}
	mux := http.NewServeMux()
	mux.Handle("/b/deleted", s3Error(http.StatusNotFound, "NoSuchKey"))
	mux.Handle("/b/no-body", s3Error(http.StatusNotFound, "")) // the SDK calls it NotFound
	mux.Handle("/gone-bucket/k", s3Error(http.StatusNotFound, "NoSuchBucket"))
	mux.Handle("/b/denied", s3Error(http.StatusForbidden, "AccessDenied"))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	for _, tc := range []struct {
		bucket, key, message string
		notExist             bool
	}{
		{"b", "deleted", "NoSuchKey", true},
		{"b", "no-body", "NotFound", true},
		{"gone-bucket", "k", "NoSuchBucket", false},
		{"b", "denied", "AccessDenied", false},
	} {
		t.Run(tc.message, func(t *testing.T) {
			st, err := NewObjectStore(context.Background(), ObjectStoreConfig{URL: "s3://" + tc.bucket, Endpoint: srv.URL, Region: "us-east-1", PathStyle: true})
			require.NoError(t, err)
			t.Cleanup(st.Close)
			_, err = st.OpenObject(context.Background(), ObjectFile{Dataset: Cases, Partition: "2026-11-30", Key: tc.key, Size: 1024})
			require.Error(t, err)
			assert.ErrorContains(t, err, tc.message, "S3's message is kept")
			assert.Equal(t, tc.notExist, errors.Is(err, fs.ErrNotExist), err.Error())
		})
	}
}

// An endpoint that accepts a request and never answers does not hold a read for ever: the
// transport stops waiting for the response's headers (and the SDK's retries do too).
func TestObjectReadOfAStalledEndpointEnds(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	defer SetObjectStoreHeaderTimeout(200 * time.Millisecond)()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		select { // never answers, until the test ends or the client gives up
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	st, err := NewObjectStore(context.Background(), ObjectStoreConfig{URL: "s3://b", Endpoint: srv.URL, Region: "us-east-1", PathStyle: true})
	require.NoError(t, err)
	t.Cleanup(st.Close)
	done := make(chan error, 1)
	go func() {
		_, err := st.OpenObject(context.Background(), ObjectFile{Dataset: Cases, Partition: "2026-11-30", Key: "k", Size: 1024})
		done <- err
	}()
	select {
	case err := <-done:
		require.Error(t, err)
	case <-time.After(20 * time.Second):
		t.Fatal("the read still waits for an endpoint that never answers")
	}
}
