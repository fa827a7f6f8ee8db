package replayparquetreceiver

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/internal/teststorage"
)

// closeCounted is the receiver's files, counting its closes.
type closeCounted struct {
	files
	closed *atomic.Int32
}

func (c closeCounted) close() { c.closed.Add(1); c.files.close() }

// A Start that fails after the dataset's files were opened (here: the storage extension is
// missing) closes them: the collector need not call Shutdown after a failed Start, and the
// object store's connections would stay open.
func TestFailedStartClosesTheFilesItOpened(t *testing.T) {
	var opened, closed atomic.Int32
	defer func(orig func(context.Context, *Config) (files, error)) { openFiles = orig }(openFiles)
	openFiles = func(ctx context.Context, cfg *Config) (files, error) {
		f, err := newFiles(ctx, cfg)
		if err == nil {
			opened.Add(1)
			f = closeCounted{f, &closed}
		}
		return f, err
	}
	for name, edit := range map[string]func(*Config){
		"directory": func(*Config) {},
		"object store": func(c *Config) {
			c.Directory = ""
			c.ObjectStore = configoptional.Some(dataset.ObjectStoreConfig{URL: "s3://bucket/team-a", Endpoint: "http://127.0.0.1:1", Region: "us-east-1", PathStyle: true})
		},
	} {
		t.Run(name, func(t *testing.T) {
			opened.Store(0)
			closed.Store(0)
			rcv, _ := newTestReceiver(t, receivertest.NewNopSettings(NewFactory().Type()), t.TempDir(), edit, consumertest.NewNop(), nil)
			require.Error(t, rcv.Start(context.Background(), componenttest.NewNopHost()))
			assert.Equal(t, int32(1), opened.Load())
			assert.Equal(t, opened.Load(), closed.Load(), "files opened by the failed Start and not closed")
			require.NoError(t, rcv.Shutdown(context.Background()))
			assert.Equal(t, int32(1), closed.Load(), "closed once")
		})
	}
}

// A directory that does not exist fails a once-mode Start, naming the field: a misspelled path
// listed no file, and the receiver reported its backlog done. Watch mode waits for it (the
// exporter creates it at its first start).
func TestMissingDirectoryFailsOnceModeStart(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "reprise-date")
	host, ext := teststorage.Start(t, t.TempDir())
	defer func() { require.NoError(t, ext.Shutdown(context.Background())) }()

	rcv, _ := newTestReceiver(t, receivertest.NewNopSettings(NewFactory().Type()), missing, func(*Config) {}, consumertest.NewNop(), nil)
	err := rcv.Start(context.Background(), host)
	require.ErrorContains(t, err, "directory: "+missing+" does not exist")
	require.NoError(t, rcv.Shutdown(context.Background()))

	watch, _ := newTestReceiver(t, receivertest.NewNopSettings(NewFactory().Type()), missing, func(c *Config) { c.Mode = ModeWatch }, consumertest.NewNop(), nil)
	require.NoError(t, watch.Start(context.Background(), host))
	require.NoError(t, watch.Shutdown(context.Background()))
}

// A once-mode backlog that found no file to read says so, as a warning naming where it looked:
// an empty dataset and a wrong prefix of a bucket look the same.
func TestBacklogOfNoFileIsAWarning(t *testing.T) {
	host, ext := teststorage.Start(t, t.TempDir())
	defer func() { require.NoError(t, ext.Shutdown(context.Background())) }()
	core, logs := observer.New(zap.InfoLevel)
	set := receivertest.NewNopSettings(NewFactory().Type())
	set.Logger = zap.New(core)
	root := t.TempDir()
	rcv, r := newTestReceiver(t, set, root, func(*Config) {}, consumertest.NewNop(), nil)
	require.NoError(t, rcv.Start(context.Background(), host))
	waitBacklog(t, r)
	require.NoError(t, rcv.Shutdown(context.Background()))

	warned := logs.FilterMessage("replay_parquet: backlog done (mode: once) without a file to read: the dataset has no data file of select.datasets (within select.from and select.to)").All()
	require.Len(t, warned, 1)
	assert.Equal(t, zap.WarnLevel, warned[0].Level)
	assert.Equal(t, root, warned[0].ContextMap()["dataset"])
}
