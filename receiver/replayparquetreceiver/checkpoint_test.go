package replayparquetreceiver

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/reprise-dev/reprise/internal/testfixtures"
)

// flakyStorage is a storage extension whose client keeps values in memory and fails the
// first failSets calls of Set (a full disk, a busy database).
type flakyStorage struct {
	component.StartFunc
	component.ShutdownFunc
	mu       sync.Mutex
	values   map[string][]byte
	failSets int
}

func (s *flakyStorage) GetClient(context.Context, component.Kind, component.ID, string) (storage.Client, error) {
	return s, nil
}

func (s *flakyStorage) Get(_ context.Context, key string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.values[key], nil
}

func (s *flakyStorage) Set(_ context.Context, key string, value []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failSets > 0 {
		s.failSets--
		return errors.New("no space left on device (test)")
	}
	s.values[key] = value
	return nil
}

func (s *flakyStorage) Delete(context.Context, string) error               { return nil }
func (s *flakyStorage) Batch(context.Context, ...*storage.Operation) error { return nil }
func (s *flakyStorage) Close(context.Context) error                        { return nil }

type flakyHost struct {
	component.Host
	ext *flakyStorage
}

func (h flakyHost) GetExtensions() map[component.ID]component.Component {
	return map[component.ID]component.Component{storageID: h.ext}
}

// A checkpoint that cannot be saved after a push the next consumer took is saved again; the
// file is not read again from the old checkpoint, which would push those cases a second time.
func TestCheckpointSaveFailureDoesNotEmitTwice(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	capture(t, root, testfixtures.OTelNoContent, 1, 4, strict)

	st := &flakyStorage{values: map[string][]byte{}, failSets: 1}
	rec := &traceRecorder{accept: -1}
	next, err := consumer.NewTraces(rec.consume)
	require.NoError(t, err)
	rcv, r := newTestReceiver(t, receivertest.NewNopSettings(NewFactory().Type()), root, func(c *Config) {
		c.BatchSize = 2
	}, next, nil)
	require.NoError(t, rcv.Start(context.Background(), flakyHost{componenttest.NewNopHost(), st}))
	waitBacklog(t, r)
	require.NoError(t, rcv.Shutdown(context.Background()))

	distinct := map[string]bool{}
	for _, id := range rec.accepted {
		distinct[id] = true
	}
	assert.Len(t, distinct, 4, "every case emitted")
	assert.Len(t, rec.accepted, 4, "no case emitted twice")
}
