package replayparquetreceiver

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/reprise-dev/reprise/dataset"
)

// Why the rows of a data file are not read (files_skipped{reason}).
const (
	skipRemoved    = "removed"    // the file was removed from the dataset before it was read
	skipUnreadable = "unreadable" // its bytes are not a data file this build reads
)

// skipped handles a file that processFile could not read, and reports whether it is done with:
// reading it again cannot help, so it is logged, counted and not read again. A file removed
// from the dataset (published files are never removed by Reprise) has no rows left to select;
// a file whose bytes are not a data file this build reads (not Parquet, a truncated footer,
// another schema version, a corrupt page) fails the same way at every read, so it is set aside
// in its checkpoint, which keeps a restart from reading it again (the rows around a corrupt
// page were emitted, and those it makes unreadable counted, by processFile). Any other error may pass (the disk,
// a permission, the network): the file is not done with, and is read again at the next poll.
func (r *replayReceiver) skipped(ctx context.Context, f dataset.File, err error) bool {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		r.dropLog.Warn("a data file was removed before it was read; its rows are not emitted", zap.String("file", f.Path))
		r.countSkipped(ctx, f, skipRemoved)
		return true
	case errors.Is(err, dataset.ErrUnreadable):
		rel := sourceOf(f).rel
		if r.saveCheckpoint(ctx, rel, func() error { return r.checkpoints.setAside(ctx, rel) }) != nil {
			return false // shutdown: the next start reads it, and sets it aside, again
		}
		r.dropLog.Error("set aside a file that is not a data file this build reads; the rows it could read were emitted, and it is not read again", zap.String("file", f.Path), zap.Error(err))
		r.countSkipped(ctx, f, skipUnreadable)
		return true
	}
	return false
}

func (r *replayReceiver) countSkipped(ctx context.Context, f dataset.File, reason string) {
	r.telemetry.ReceiverReplayParquetFilesSkipped.Add(ctx, 1, metric.WithAttributes(attribute.String("dataset", f.Dataset), attribute.String("reason", reason)))
}

// rowsLost is a range of rows of a data file, [from, to), that a corrupt page makes unreadable.
type rowsLost struct {
	from, to int64
	err      error
}

// accountLost counts and logs the rows of a file that could not be read, once the checkpoint
// that passes them is saved, so that a restart neither counts nor logs them again.
func (r *replayReceiver) accountLost(ctx context.Context, f dataset.File, lost []rowsLost) {
	if len(lost) == 0 {
		return
	}
	var n int64
	ranges := make([]string, len(lost))
	for i, l := range lost {
		n += l.to - l.from
		ranges[i] = fmt.Sprintf("%d-%d", l.from, l.to-1)
	}
	r.telemetry.ReceiverReplayParquetRowsSkipped.Add(ctx, n, metric.WithAttributes(attribute.String("dataset", f.Dataset), attribute.String("reason", skipUnreadable)))
	r.dropLog.Error("rows of a data file cannot be read (a corrupt page); they are not emitted",
		zap.String("file", f.Path), zap.String("rows", strings.Join(ranges, ", ")), zap.Int64("count", n), zap.Error(lost[0].err))
}
