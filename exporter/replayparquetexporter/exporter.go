package replayparquetexporter

import (
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/exporter/replayparquetexporter/internal/metadata"
	"github.com/reprise-dev/reprise/replaycase"
)

// parquetExporter is a thin component over package dataset, which owns the layout, the
// schema and publishing: it decodes the case spans it receives and hands them to a
// dataset.Writer, and turns what happened into telemetry.
type parquetExporter struct {
	cfg       *Config
	logger    *zap.Logger
	telemetry *metadata.TelemetryBuilder
	writer    *dataset.Writer
	// writerOptions are passed to the dataset writer (tests inject write failures with them).
	writerOptions []dataset.Option
}

func newParquetExporter(set exporter.Settings, cfg *Config) (*parquetExporter, error) {
	tb, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	return &parquetExporter{cfg: cfg, logger: set.Logger, telemetry: tb}, nil
}

// staleAfter is how old an uncommitted batch in staging must be before start deletes it: it was
// left by a process that died while writing (its cases are still in that process's queue, if
// persistent). A younger one may belong to another collector writing into the same root.
const staleAfter = 15 * time.Minute

func (e *parquetExporter) start(context.Context, component.Host) error {
	w, err := dataset.NewWriter(dataset.WriterConfig{
		Root: e.cfg.Directory, Staging: e.cfg.staging(), Compression: e.cfg.Compression,
		MaxRowsPerFile: e.cfg.MaxRowsPerFile, RowGroupRows: e.cfg.RowGroupRows,
	}, e.writerOptions...)
	if err != nil {
		return fmt.Errorf("replay_parquet: %w", err)
	}
	rec, err := w.Recover(time.Now().Add(-staleAfter))
	for _, f := range rec.RolledForward {
		e.logger.Warn("published a file of a batch committed before a crash", zap.String("file", f.Path), zap.Int("rows", f.Rows))
	}
	if rec.RolledBack > 0 {
		e.logger.Info("deleted batches left uncommitted by an interrupted write", zap.Int("batches", rec.RolledBack))
	}
	if err != nil {
		return fmt.Errorf("replay_parquet: recovering staging directory %s: %w", e.cfg.staging(), err)
	}
	e.writer = w
	return nil
}

// push writes one batch of cases: every file is complete and published before push returns,
// so the queue only drops cases that are on disk.
func (e *parquetExporter) push(ctx context.Context, td ptrace.Traces) error {
	cases, err := replaycase.Decode(td)
	if err != nil {
		return consumererror.NewPermanent(fmt.Errorf("not replay cases in the canonical form (is the replay_case processor in this pipeline?): %w", err))
	}
	if len(cases) == 0 {
		return nil
	}
	res, err := e.writer.Write(cases)
	if err != nil {
		return err
	}
	e.record(ctx, res)
	return nil
}

func (e *parquetExporter) record(ctx context.Context, res dataset.Result) {
	for _, f := range res.Files {
		attrs := metric.WithAttributes(attribute.String("dataset", f.Dataset))
		e.telemetry.ExporterReplayParquetFilesWritten.Add(ctx, 1, attrs)
		e.telemetry.ExporterReplayParquetRowsWritten.Add(ctx, int64(f.Rows), attrs)
		e.telemetry.ExporterReplayParquetBytesWritten.Add(ctx, f.Bytes, attrs)
	}
}
