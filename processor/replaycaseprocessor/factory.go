package replaycaseprocessor

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/processor"

	"github.com/reprise-dev/reprise/processor/replaycaseprocessor/internal/metadata"
	"github.com/reprise-dev/reprise/scrub"
)

// NewFactory returns the factory of the replay_case processor.
func NewFactory() processor.Factory {
	return processor.NewFactory(metadata.Type, createDefaultConfig,
		processor.WithTraces(createTraces, metadata.TracesStability),
		processor.WithLogs(createLogs, metadata.LogsStability))
}

func createDefaultConfig() component.Config {
	return &Config{
		RootGracePeriod: 2 * time.Second,
		IdleTimeout:     30 * time.Second,
		MaxAge:          5 * time.Minute,
		Limits: LimitsConfig{
			MaxOpenTraces:    10_000,
			MaxSpansPerTrace: 5_000,
			MaxBufferedBytes: 256 << 20,
		},
		Evidence: EvidenceConfig{Require: allChecks()},
		RawSpans: rawQuarantined,
		Scrub:    scrub.DefaultConfig(),
	}
}

// One processor instance serves the traces and the logs pipelines of the same component ID
// (decision D1): log events and spans of a trace must meet in one buffer. Instances are keyed
// by their config, as the collector hands the same *Config to both create calls.
var (
	sharedMu sync.Mutex
	shared   = map[*Config]*caseProcessor{}
)

func acquire(set processor.Settings, cfg *Config) (*caseProcessor, error) {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	p, ok := shared[cfg]
	if !ok {
		var err error
		if p, err = newCaseProcessor(set, cfg); err != nil {
			return nil, err
		}
		p.release = func() {
			sharedMu.Lock()
			defer sharedMu.Unlock()
			delete(shared, cfg)
		}
		shared[cfg] = p
	}
	p.users++
	return p, nil
}

func createTraces(_ context.Context, set processor.Settings, cfg component.Config, next consumer.Traces) (processor.Traces, error) {
	p, err := acquire(set, cfg.(*Config))
	if err != nil {
		return nil, err
	}
	p.nextTraces = next
	return &tracesProcessor{p}, nil
}

func createLogs(_ context.Context, set processor.Settings, cfg component.Config, next consumer.Logs) (processor.Logs, error) {
	p, err := acquire(set, cfg.(*Config))
	if err != nil {
		return nil, err
	}
	p.nextLogs = next
	return &logsProcessor{p}, nil
}

// tracesProcessor and logsProcessor are the per-pipeline faces of one caseProcessor.
type tracesProcessor struct{ *caseProcessor }

type logsProcessor struct{ *caseProcessor }

var (
	_ processor.Traces = (*tracesProcessor)(nil)
	_ processor.Logs   = (*logsProcessor)(nil)
)

// MutatesData is true: the processor moves spans and log records into its buffers instead of
// copying them, so the pipeline hands it data no other consumer shares.
func (p *caseProcessor) Capabilities() consumer.Capabilities {
	return consumer.Capabilities{MutatesData: true}
}
