package replayparquetreceiver

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/reprise-dev/reprise/dataset"
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
