package replayparquetreceiver

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension/xextension/storage"

	"github.com/reprise-dev/reprise/dataset"
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
//
// A file set aside (its bytes are not a data file this build reads, dataset.ErrUnreadable)
// has the value setAsideMark, a space, the schema version the build reads, a space and the
// value it had before (the rows handled before a corrupt page; none for a file set aside at
// its footer): it is not read again, under any selection, by a build that reads that version;
// a build that reads another one (an upgrade) reads it again after the rows handled before,
// so that it emits none of them twice.
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

const setAsideMark = "unreadable"

// rowsDone is how many rows of the file were handled before, or setAside when the file was
// set aside by a build that reads the same schema version.
func (c *checkpoints) rowsDone(ctx context.Context, rel string) (n int64, setAside bool, err error) {
	b, err := c.client.Get(ctx, checkpointKey(rel))
	if err != nil || b == nil {
		return 0, false, err
	}
	count, selection, recorded := strings.Cut(string(b), " ")
	if count == setAsideMark {
		version, before, _ := strings.Cut(selection, " ")
		if version == dataset.SchemaVersion || before == "" {
			return 0, version == dataset.SchemaVersion, nil
		}
		count, selection, recorded = strings.Cut(before, " ")
	}
	n, err = strconv.ParseInt(count, 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("checkpoint of %s is %q, not a row count: %w", rel, b, err)
	}
	if recorded && selection != c.selection {
		return 0, false, nil // counted under another selection: none of its rows is handled for this one
	}
	return n, false, nil
}

func (c *checkpoints) setRowsDone(ctx context.Context, rel string, n int64) error {
	return c.client.Set(ctx, checkpointKey(rel), []byte(c.rowsValue(n)))
}

// A push in flight (emit: cases). The record "inflight/<path under the dataset root>" (value:
// a row, a count of rows and the row selection, space-separated) says that the push of the
// file's next selected rows from that row, as many as the count, may be in flight: batch_size,
// or more while rows of a push in flight at the last stop, under a larger batch_size, are
// pushed again. The checkpoint after a push moves it to the row after the push, in the same
// storage batch: only the first push of a file in a run, and a push larger than the record
// found (batch_size raised since the last stop), cost a write of their own. A record found at
// a start at the file's checkpoint is a push the collector may have died in, before or after
// the exporter wrote it: the restart pushes those rows again marked Resent, and the exporter
// leaves out the cases it finds written (dataset/resent.go) and writes the others.
// FuzzACopyKilledAnywhereWritesEveryCaseOnce kills a copy anywhere, with batch_size changed
// between its lives.
func inFlightKey(rel string) string { return "inflight/" + rel }

func (c *checkpoints) inFlightValue(from int64, rows int) []byte {
	return []byte(strconv.FormatInt(from, 10) + " " + strconv.Itoa(rows) + " " + c.selection)
}

// setInFlight records that the push of up to rows selected rows from row from may be in flight.
func (c *checkpoints) setInFlight(ctx context.Context, rel string, from int64, rows int) error {
	return c.client.Set(ctx, inFlightKey(rel), c.inFlightValue(from, rows))
}

// inFlight is how many selected rows from the checkpoint done a push in flight at the last stop
// may have held: 0 when no record names done under this selection.
func (c *checkpoints) inFlight(ctx context.Context, rel string, done int64) (rows int, err error) {
	b, err := c.client.Get(ctx, inFlightKey(rel))
	if err != nil || b == nil {
		return 0, err
	}
	var from int64
	var selection string
	if _, err := fmt.Sscanf(string(b), "%d %d %s", &from, &rows, &selection); err != nil {
		return 0, fmt.Errorf("push in flight of %s is %q, not a row, a batch size and a selection: %w", rel, b, err)
	}
	if from != done || selection != c.selection {
		return 0, nil // another push's, or another selection's: these rows were not pushed under it
	}
	return rows, nil
}

// setRowsDoneAfterPush saves the checkpoint after a push, and records the next push from there
// as in flight, in one storage batch.
func (c *checkpoints) setRowsDoneAfterPush(ctx context.Context, rel string, n int64, rows int) error {
	return c.client.Batch(ctx,
		storage.SetOperation(checkpointKey(rel), []byte(c.rowsValue(n))),
		storage.SetOperation(inFlightKey(rel), c.inFlightValue(n, rows)))
}

// rowsValue is the value that counts n rows handled under the selection.
func (c *checkpoints) rowsValue(n int64) string { return strconv.FormatInt(n, 10) + " " + c.selection }

// setAside records that the file is not read again: its bytes are not a data file this build
// reads. It keeps the rows handled before.
func (c *checkpoints) setAside(ctx context.Context, rel string) error {
	n, _, err := c.rowsDone(ctx, rel)
	if err != nil {
		return err
	}
	return c.client.Set(ctx, checkpointKey(rel), []byte(setAsideMark+" "+dataset.SchemaVersion+" "+c.rowsValue(n)))
}

func (c *checkpoints) close(ctx context.Context) error { return c.client.Close(ctx) }
