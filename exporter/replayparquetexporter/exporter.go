package replayparquetexporter

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"

	"github.com/reprise-dev/reprise/exporter/replayparquetexporter/internal/metadata"
	"github.com/reprise-dev/reprise/replaycase"
)

type parquetExporter struct {
	cfg       *Config
	logger    *zap.Logger
	telemetry *metadata.TelemetryBuilder
	datasets  *datasets
}

func newParquetExporter(set exporter.Settings, cfg *Config) (*parquetExporter, error) {
	tb, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	return &parquetExporter{cfg: cfg, logger: set.Logger, telemetry: tb}, nil
}

// staleAfter is how old a staged file must be before start removes it: it was left by a
// process that died while writing (its cases are still in that process's queue, if persistent).
const staleAfter = 15 * time.Minute

func (e *parquetExporter) start(context.Context, component.Host) error {
	root, staging := filepath.Clean(e.cfg.Directory), e.cfg.staging()
	for _, dir := range []string{root, staging} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("replay_parquet: %w", err)
		}
	}
	if err := checkSameFilesystem(root, staging); err != nil {
		return fmt.Errorf("replay_parquet: staging_directory %s and directory %s: %w", staging, root, err)
	}
	removeStale(staging, time.Now().Add(-staleAfter), e.logger)
	e.datasets = newDatasets(root, staging, e.cfg, e.telemetry)
	return nil
}

// push writes one batch of cases: every file is complete and published (renamed into the
// dataset) before push returns, so the queue only drops cases that are on disk.
func (e *parquetExporter) push(ctx context.Context, td ptrace.Traces) error {
	cases, err := replaycase.Decode(td)
	if err != nil {
		return consumererror.NewPermanent(fmt.Errorf("not replay cases in the canonical form (is the replay_case processor in this pipeline?): %w", err))
	}
	if len(cases) == 0 {
		return nil
	}
	return e.datasets.write(ctx, cases)
}

// checkSameFilesystem proves that a file can be renamed from staging into root.
func checkSameFilesystem(root, staging string) error {
	f, err := os.CreateTemp(staging, "probe-*.tmp")
	if err != nil {
		return err
	}
	f.Close()
	target := filepath.Join(root, "."+filepath.Base(f.Name()))
	if err := os.Rename(f.Name(), target); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("cannot rename between them (they must be on the same filesystem): %w", err)
	}
	return os.Remove(target)
}

func removeStale(staging string, before time.Time, logger *zap.Logger) {
	entries, err := os.ReadDir(staging)
	if err != nil {
		return
	}
	for _, entry := range entries {
		info, err := entry.Info()
		if err != nil || !strings.HasSuffix(entry.Name(), ".tmp") || info.ModTime().After(before) {
			continue
		}
		if os.Remove(filepath.Join(staging, entry.Name())) == nil {
			logger.Info("removed a file left by an interrupted write", zap.String("file", entry.Name()))
		}
	}
}
