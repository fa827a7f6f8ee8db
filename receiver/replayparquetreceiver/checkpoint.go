package replayparquetreceiver

import (
	"context"
	"fmt"
	"strconv"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension/xextension/storage"

	"github.com/reprise-dev/reprise/internal/storageclient"
)

// checkpoints keeps, per data file, the number of rows already handled (emitted, dropped or
// not selected), in a storage extension. Key: "file/<path under the dataset root>"; value:
// the row count in decimal. Files are immutable once published, so a row number is stable.
type checkpoints struct {
	client storage.Client
}

func openCheckpoints(ctx context.Context, host component.Host, storageID, owner component.ID) (*checkpoints, error) {
	client, err := storageclient.Open(ctx, host, storageID, component.KindReceiver, owner)
	if err != nil {
		return nil, err
	}
	return &checkpoints{client: client}, nil
}

func checkpointKey(rel string) string { return "file/" + rel }

// rowsDone is how many rows of the file were handled before.
func (c *checkpoints) rowsDone(ctx context.Context, rel string) (int64, error) {
	b, err := c.client.Get(ctx, checkpointKey(rel))
	if err != nil || b == nil {
		return 0, err
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("checkpoint of %s is %q, not a row count: %w", rel, b, err)
	}
	return n, nil
}

func (c *checkpoints) setRowsDone(ctx context.Context, rel string, n int64) error {
	return c.client.Set(ctx, checkpointKey(rel), []byte(strconv.FormatInt(n, 10)))
}

func (c *checkpoints) close(ctx context.Context) error { return c.client.Close(ctx) }
