package replaycaseprocessor

import (
	"container/list"
	"context"
	"errors"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.uber.org/zap"

	"github.com/reprise-dev/reprise/processor/replaycaseprocessor/internal/metadata"
	"github.com/reprise-dev/reprise/scrub"
)

// caseProcessor buffers spans and GenAI log events per trace and closes each trace into one
// replay case. One instance serves the traces and the logs pipeline of a component ID.
//
// Data flow (file that owns each step in brackets):
//
//	ConsumeTraces ─ splitTraces ─┐                [split.go]
//	ConsumeLogs ── splitLogs ────┤ one chunk per trace id
//	                             ▼
//	                  buffer + grow (limits)      [buffer.go]  open: map trace id → traceBuffer,
//	                             │                             order: oldest first
//	     limit hit ──────────────┤ take → closing
//	     sweep (grace, idle, max_age), Shutdown ─┤            [sweep.go]
//	                             ▼
//	                  buildCase: scrub, normalize, judge      [verdict.go]
//	                             ▼
//	                  emit: canonical case spans → next traces consumer,
//	                        non-GenAI traces unchanged, their events → next logs consumer [emit.go]
//
// All buffer state is guarded by mu; building and emitting cases happens outside the lock.
type caseProcessor struct {
	cfg        *Config
	logger     *zap.Logger
	telemetry  *metadata.TelemetryBuilder
	nextTraces consumer.Traces
	nextLogs   consumer.Logs
	required   map[string]bool
	metadata   *extractor
	assertions *extractor
	scrubber   *scrub.Scrubber
	now        func() time.Time

	mu      sync.Mutex
	open    map[pcommon.TraceID]*traceBuffer
	order   *list.List    // open traces, oldest first
	closed  *recentTraces // recently closed trace ids, to recognise late spans
	bytes   int64
	started bool // the sweeper runs
	stopped bool // Shutdown has flushed the buffers

	stop chan struct{}
	done chan struct{}
}

func newCaseProcessor(set processor.Settings, cfg *Config) (*caseProcessor, error) {
	tb, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	md, err := newExtractor(set.TelemetrySettings, "metadata", cfg.Metadata)
	if err != nil {
		return nil, err
	}
	as, err := newExtractor(set.TelemetrySettings, "assertions", cfg.Assertions)
	if err != nil {
		return nil, err
	}
	scrubber, err := scrub.New(cfg.Scrub)
	if err != nil {
		return nil, err
	}
	return &caseProcessor{
		cfg:        cfg,
		logger:     set.Logger,
		telemetry:  tb,
		required:   cfg.requiredReasons(),
		metadata:   md,
		assertions: as,
		scrubber:   scrubber,
		now:        time.Now,
		open:       map[pcommon.TraceID]*traceBuffer{},
		order:      list.New(),
		closed:     newRecentTraces(cfg.Limits.MaxOpenTraces),
		stop:       make(chan struct{}),
		done:       make(chan struct{}),
	}, nil
}

// Start starts the sweeper. The shared-component wrapper calls it once for both pipelines.
func (p *caseProcessor) Start(context.Context, component.Host) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.started || p.stopped {
		return nil
	}
	p.started = true
	if p.nextTraces == nil {
		p.logger.Warn("replay_case is in no traces pipeline: it cannot emit cases, so it passes log events through unchanged")
	}
	go p.sweepLoop()
	return nil
}

// Shutdown flushes every open case. The shared-component wrapper calls it on the first
// Shutdown from either pipeline: the collector shuts components down upstream first, so at that
// moment the traces exporters downstream of this processor are still running. Cases still
// waiting for their root span are quarantined with reason "shutdown". Spans that still arrive
// afterwards (from a receiver of the other pipeline) are closed into cases at once; log events
// pass through unchanged.
func (p *caseProcessor) Shutdown(ctx context.Context) error {
	p.mu.Lock()
	started := p.started
	p.stopped = true
	p.mu.Unlock()
	if started {
		close(p.stop)
		<-p.done
	}
	err := p.flush(ctx)
	p.telemetry.Shutdown()
	return err
}

// ConsumeTraces buffers spans per trace. Cases closed early by a limit are emitted before it
// returns, so limits apply back-pressure and their errors reach the caller.
func (p *caseProcessor) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	chunks := splitTraces(td)
	p.mu.Lock()
	now := p.now()
	var due []closing
	for _, c := range chunks {
		b := p.buffer(c.id, now)
		b.rootSeen = b.rootSeen || c.root
		p.grow(b, c.items, int64(tracesSizer.TracesSize(c.td)))
		c.td.ResourceSpans().MoveAndAppendTo(b.spans.ResourceSpans())
		due = p.checkSpanLimit(b, due)
	}
	due = p.enforceLimits(due)
	stopped := p.stopped
	p.mu.Unlock()
	err := p.emit(ctx, due)
	if stopped {
		err = errors.Join(err, p.flush(ctx))
	}
	return err
}

// ConsumeLogs joins GenAI log events (event name gen_ai.*, with a trace id) into their trace's
// buffer and passes every other log record on.
func (p *caseProcessor) ConsumeLogs(ctx context.Context, ld plog.Logs) error {
	p.mu.Lock()
	stopped := p.stopped
	p.mu.Unlock()
	if p.nextTraces == nil || stopped {
		p.scrubber.Logs(ld, &scrub.Report{})
		return p.nextLogs.ConsumeLogs(ctx, ld)
	}
	chunks := splitLogs(ld, p.cfg.ForwardJoinedLogs)
	p.mu.Lock()
	now := p.now()
	var due []closing
	for _, c := range chunks {
		b := p.buffer(c.id, now)
		p.grow(b, c.items, int64(logsSizer.LogsSize(c.ld)))
		c.ld.ResourceLogs().MoveAndAppendTo(b.events.ResourceLogs())
		due = p.checkSpanLimit(b, due)
	}
	due = p.enforceLimits(due)
	p.mu.Unlock()
	err := p.emit(ctx, due)
	if ld.LogRecordCount() > 0 {
		p.scrubber.Logs(ld, &scrub.Report{}) // what passes on is scrubbed too
		err = errors.Join(err, p.nextLogs.ConsumeLogs(ctx, ld))
	}
	return err
}

// MutatesData is true: the processor moves spans and log records into its buffers instead of
// copying them, so the pipeline hands it data no other consumer shares.
func (p *caseProcessor) Capabilities() consumer.Capabilities {
	return consumer.Capabilities{MutatesData: true}
}
