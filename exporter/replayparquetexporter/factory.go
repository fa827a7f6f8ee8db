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
	// No queue by default: each call returns only once its cases are written (a fsynced
	// segment or a published file), so the caller keeps its own copy until then —
	// replay_case's write-ahead storage, or its in-memory batch that it sends again. An
	// in-memory queue would accept cases before they are on disk and let replay_case release
	// its write-ahead copy: a crash would lose acknowledged runs. A sending_queue section the
	// user adds (e.g. with storage, where nothing upstream is durable) starts from the
	// settings below.
	//
	// The queue is counted in bytes so that what it holds in memory has a bound: a queue of
	// requests holds requests of any size. When it is full, new batches are refused with a
	// retryable error (the processor keeps them and refuses new data upstream) instead of
	// being accepted into an unbounded backlog. Two consumers keep both cores busy writing
	// while bounding the batches being encoded at once.
	queue := exporterhelper.NewDefaultQueueConfig()
	queue.Sizer = exporterhelper.RequestSizerTypeBytes
	queue.QueueSize = 64 << 20
	queue.NumConsumers = 2
	batch := exporterhelper.NewDefaultBatchConfig()
	batch.FlushTimeout = 10 * time.Second // a case is visible within 10 s of reaching the exporter
	batch.Sizer = exporterhelper.RequestSizerTypeBytes
	// or as soon as 4 MiB of cases (OTLP protobuf bytes) are waiting: writing a batch holds
	// about 7 times its size in memory (BenchmarkBatchMemory), so the batch size bounds the
	// memory of each consumer.
	batch.MinSize = 4 << 20
	queue.Batch = configoptional.Some(batch)
	return &Config{
		Directory:         "./reprise-data",
		MaxRowsPerFile:    100_000,
		RowGroupRows:      5_000,
		FileMaxStagedSize: 256 << 20,
		Compression:       "zstd",
		Retention:         RetentionConfig{Interval: time.Hour},
		Timeout:           exporterhelper.NewDefaultTimeoutConfig().Timeout,
		QueueConfig:       configoptional.Default(queue),
		RetryConfig:       configretry.NewDefaultBackOffConfig(),
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
	return e.traces(ctx, set)
}

// traces wraps the exporter in the exporterhelper (tests give it their drop logger first).
func (e *parquetExporter) traces(ctx context.Context, set exporter.Settings) (exporter.Traces, error) {
	c := e.cfg
	return exporterhelper.NewTraces(ctx, set, c, e.push,
		exporterhelper.WithStart(e.start),
		exporterhelper.WithShutdown(e.shutdown),
		exporterhelper.WithCapabilities(consumer.Capabilities{MutatesData: false}),
		exporterhelper.WithTimeout(exporterhelper.TimeoutConfig{Timeout: c.Timeout}),
		exporterhelper.WithRetry(c.RetryConfig),
		exporterhelper.WithQueue(c.QueueConfig))
}
