package replayparquetreceiver

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension/xextension/storage"

	"github.com/reprise-dev/reprise/internal/storageclient"
)

// checkpoints keeps, per data file, the number of rows already handled (emitted, dropped or
// not selected), in a storage extension. Key: "file/<path under the dataset root>"; value:
// the row count in decimal, a space and the row selection it was counted under
// (Config.rowSelection). Files are immutable once published, so a row number is stable.
//
// A row not selected counts as handled only for the selection that passed it over: under
// another one (a second re-drive with other reason codes, from the same storage and component
// id), the file is read again from its start. A value without a selection (written before
// selections were recorded) counts for any.
type checkpoints struct {
	client    storage.Client
	selection string
}

func openCheckpoints(ctx context.Context, host component.Host, storageID, owner component.ID, selection string) (*checkpoints, error) {
	client, err := storageclient.Open(ctx, host, storageID, component.KindReceiver, owner)
	if err != nil {
		return nil, err
	}
	return &checkpoints{client: client, selection: selection}, nil
}

func checkpointKey(rel string) string { return "file/" + rel }

// rowsDone is how many rows of the file were handled before.
func (c *checkpoints) rowsDone(ctx context.Context, rel string) (int64, error) {
	b, err := c.client.Get(ctx, checkpointKey(rel))
	if err != nil || b == nil {
		return 0, err
	}
	count, selection, recorded := strings.Cut(string(b), " ")
	n, err := strconv.ParseInt(count, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("checkpoint of %s is %q, not a row count: %w", rel, b, err)
	}
	if recorded && selection != c.selection {
		return 0, nil // counted under another selection: none of its rows is handled for this one
	}
	return n, nil
}

func (c *checkpoints) setRowsDone(ctx context.Context, rel string, n int64) error {
	return c.client.Set(ctx, checkpointKey(rel), []byte(strconv.FormatInt(n, 10)+" "+c.selection))
}

func (c *checkpoints) close(ctx context.Context) error { return c.client.Close(ctx) }
