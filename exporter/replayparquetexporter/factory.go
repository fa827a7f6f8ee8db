package replayparquetexporter

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/config/configretry"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"

	"github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/exporter/replayparquetexporter/internal/metadata"
)

// NewFactory returns the factory of the replay_parquet exporter.
func NewFactory() exporter.Factory {
	return exporter.NewFactory(metadata.Type, createDefaultConfig,
		exporter.WithTraces(createTraces, metadata.TracesStability))
}

func createDefaultConfig() component.Config {
	queue := exporterhelper.NewDefaultQueueConfig()
	batch := exporterhelper.NewDefaultBatchConfig()
	batch.FlushTimeout = 10 * time.Second // a case is visible within 10 s of reaching the exporter
	batch.Sizer = exporterhelper.RequestSizerTypeBytes
	batch.MinSize = 16 << 20 // or as soon as 16 MiB of cases are waiting
	queue.Batch = configoptional.Some(batch)
	return &Config{
		Directory:      "./reprise-data",
		MaxRowsPerFile: 100_000,
		RowGroupRows:   5_000,
		Compression:    "zstd",
		TimeoutConfig:  exporterhelper.NewDefaultTimeoutConfig(),
		QueueConfig:    configoptional.Some(queue),
		RetryConfig:    configretry.NewDefaultBackOffConfig(),
	}
}

func createTraces(ctx context.Context, set exporter.Settings, cfg component.Config) (exporter.Traces, error) {
	return newTraces(ctx, set, cfg.(*Config))
}

// newTraces is createTraces with options for the dataset writer (tests inject failures).
func newTraces(ctx context.Context, set exporter.Settings, c *Config, opts ...dataset.Option) (exporter.Traces, error) {
	e, err := newParquetExporter(set, c)
	if err != nil {
		return nil, err
	}
	e.writerOptions = opts
	return exporterhelper.NewTraces(ctx, set, c, e.push,
		exporterhelper.WithStart(e.start),
		exporterhelper.WithCapabilities(consumer.Capabilities{MutatesData: false}),
		exporterhelper.WithTimeout(c.TimeoutConfig),
		exporterhelper.WithRetry(c.RetryConfig),
		exporterhelper.WithQueue(c.QueueConfig))
}
