package replaycaseprocessor

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"

	"github.com/reprise-dev/reprise/internal/sharedcomponent"
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
			MaxOpenTraces:     10_000,
			MaxSpansPerTrace:  5_000,
			MaxEventsPerTrace: 5_000,
			MaxBufferedBytes:  256 << 20,
		},
		Evidence:      EvidenceConfig{Require: allChecks()},
		RawSpans:      rawQuarantined,
		EmitBatchSize: 256,
		Scrub:         scrub.DefaultConfig(),
	}
}

// instances holds one processor per component ID, shared by its traces and logs pipelines:
// log events and spans of a trace must meet in one buffer. The collector hands the same
// *Config to both create calls, so the config pointer is the key.
var instances = sharedcomponent.NewMap[*Config, *caseProcessor]()

func acquire(set processor.Settings, cfg *Config) (*sharedcomponent.Component[*caseProcessor], error) {
	return instances.LoadOrStore(cfg, func() (*caseProcessor, error) { return newCaseProcessor(set, cfg) })
}

func createTraces(_ context.Context, set processor.Settings, cfg component.Config, next consumer.Traces) (processor.Traces, error) {
	sc, err := acquire(set, cfg.(*Config))
	if err != nil {
		return nil, err
	}
	sc.Unwrap().nextTraces = next
	return &tracesProcessor{sc}, nil
}

func createLogs(_ context.Context, set processor.Settings, cfg component.Config, next consumer.Logs) (processor.Logs, error) {
	sc, err := acquire(set, cfg.(*Config))
	if err != nil {
		return nil, err
	}
	sc.Unwrap().nextLogs = next
	return &logsProcessor{sc}, nil
}

// tracesProcessor and logsProcessor are the per-pipeline faces of one shared caseProcessor:
// Start and Shutdown go through the shared wrapper (once each), data goes to the instance.
type tracesProcessor struct {
	*sharedcomponent.Component[*caseProcessor]
}

func (t *tracesProcessor) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	return t.Unwrap().ConsumeTraces(ctx, td)
}

func (t *tracesProcessor) Capabilities() consumer.Capabilities { return t.Unwrap().Capabilities() }

type logsProcessor struct {
	*sharedcomponent.Component[*caseProcessor]
}

func (l *logsProcessor) ConsumeLogs(ctx context.Context, ld plog.Logs) error {
	return l.Unwrap().ConsumeLogs(ctx, ld)
}

func (l *logsProcessor) Capabilities() consumer.Capabilities { return l.Unwrap().Capabilities() }

var (
	_ processor.Traces = (*tracesProcessor)(nil)
	_ processor.Logs   = (*logsProcessor)(nil)
)
