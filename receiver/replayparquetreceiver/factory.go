package replayparquetreceiver

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/receiver"

	"github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/internal/sharedcomponent"
	"github.com/reprise-dev/reprise/receiver/replayparquetreceiver/internal/metadata"
)

// NewFactory returns the factory of the replay_parquet receiver.
func NewFactory() receiver.Factory {
	return receiver.NewFactory(metadata.Type, createDefaultConfig,
		receiver.WithTraces(createTraces, metadata.TracesStability),
		receiver.WithLogs(createLogs, metadata.LogsStability))
}

func createDefaultConfig() component.Config {
	return &Config{
		Emit:          EmitRaw,
		Mode:          ModeOnce,
		PollInterval:  10 * time.Second,
		BatchSize:     16,
		RetryInterval: time.Second,
		Select:        SelectConfig{Datasets: []string{dataset.Quarantine}},
	}
}

// instances holds one reader per component ID, shared by its traces and logs pipelines: a
// case's raw spans and raw events must be emitted together, and each file read once. The
// collector hands the same *Config to both create calls, so the config pointer is the key. The
// reader starts with the first pipeline and stops with the first one shut down, while both
// pipelines' consumers still run (internal/sharedcomponent says why).
var instances = sharedcomponent.NewMap[*Config, *replayReceiver]()

func acquire(set receiver.Settings, cfg *Config) (*sharedcomponent.Component[*replayReceiver], error) {
	return instances.LoadOrStore(cfg, func() (*replayReceiver, error) { return newReceiver(set, cfg) })
}

func createTraces(_ context.Context, set receiver.Settings, cfg component.Config, next consumer.Traces) (receiver.Traces, error) {
	sc, err := acquire(set, cfg.(*Config))
	if err != nil {
		return nil, err
	}
	sc.Unwrap().nextTraces = next
	return sc, nil
}

func createLogs(_ context.Context, set receiver.Settings, cfg component.Config, next consumer.Logs) (receiver.Logs, error) {
	sc, err := acquire(set, cfg.(*Config))
	if err != nil {
		return nil, err
	}
	sc.Unwrap().nextLogs = next
	return sc, nil
}
