package replaycaseprocessor

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/reprise-dev/reprise/internal/droplog"
	"github.com/reprise-dev/reprise/processor/replaycaseprocessor/internal/metadata"
	"github.com/reprise-dev/reprise/scrub"
)

// caseProcessor buffers spans and GenAI log events per trace and closes each trace into one
// replay case. One instance serves the traces and the logs pipeline of a component ID.
//
// Data flow (file that owns each step in brackets):
//
//	ConsumeTraces / ConsumeLogs
//	  admit: refuse (retryable) while closed cases wait for the next consumer   [emit.go]
//	  splitTraces / splitLogs: one chunk per trace id                            [split.go]
//	  wal.write: stored before it is acknowledged (storage set)                  [wal.go]
//	  sanitize: replay.* removed, UTF-8 repaired                                 [sanitize.go]
//	  addSpans / addEvents: dedupe, per-trace limits, fragments                  [buffer.go]
//	  enforceLimits: oldest open cases closed (open-trace and byte limits)       [buffer.go]
//	sweep: root grace, idle, max_age; flush at Shutdown → outbox                 [sweep.go]
//	drain: outbox → build (scrub, normalize, select, judge) → batch → next      [emit.go, verdict.go,
//	       consumers; a run select does not keep is dropped or passed on;          select.go]
//	       a refused batch stays pending and is sent first; once sent, its
//	       memory and stored records are released                                [emit.go, wal.go]
//
// Buffer state is guarded by mu; building and sending happen outside it, one sender at a time
// (emitMu) so that cases leave in the order they closed.
type caseProcessor struct {
	cfg        *Config
	id         component.ID
	logger     *zap.Logger
	telemetry  *metadata.TelemetryBuilder
	nextTraces consumer.Traces
	nextLogs   consumer.Logs
	required   map[string]bool
	metadata   *extractor
	assertions *extractor
	selector   *selector // nil: every run becomes a case
	scrubber   *scrub.Scrubber
	pricer     *pricer
	now        func() time.Time

	mu     sync.Mutex
	open   map[pcommon.TraceID]*traceBuffer
	order  *list.List    // open traces, oldest first
	closed *recentTraces // recently closed traces and what their cases held: late spans, and retries after a close (closed_spans.go)
	// resumed are the traces cut at the span limit whose first parts were sent before the last
	// stop, read from the resume marks at start (span_limit_resume.go); nil without storage.
	resumed map[pcommon.TraceID]*resumePoint
	// handedOff are the hand-offs a kill interrupted, read on start (handoff_marks.go): the
	// closed cases restore rebuilds from the records, by trace, oldest first. nil after restore.
	handedOff map[pcommon.TraceID][]*handedOff
	bytes     int64 // estimated heap of open, closed-unsent and refused cases
	// openBytes is the part of bytes that open buffers hold: the byte limit closes open cases
	// until they fit, since closing one does not free its memory until it is sent.
	openBytes int64
	outbox    []closing // closed cases not yet built and sent
	pending   []*batch  // built cases the next consumer refused, oldest first
	sending   *batch    // the batch being sent, if any (shutdown_deadline.go)
	abandoned bool      // Shutdown's deadline passed without storage: a refused batch is dropped, not kept
	started   bool      // the sweeper runs
	stopped   bool      // Shutdown has flushed the buffers

	flushRetry time.Duration // how long Shutdown retries a refusing next consumer
	emitMu     sync.Mutex    // one sender at a time, so that cases leave in the order they closed
	dropLog    *zap.Logger   // every dropped case, unsampled (internal/droplog)
	wal        *wal          // write-ahead copy of accepted telemetry; nil methods are no-ops

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
	sel, err := newSelector(set.TelemetrySettings, cfg.Select, cfg.Limits.MaxOpenTraces)
	if err != nil {
		return nil, err
	}
	scrubber, err := scrub.New(cfg.Scrub)
	if err != nil {
		return nil, err
	}
	pr, err := newPricer(cfg.Pricing, tb)
	if err != nil {
		return nil, err
	}
	return &caseProcessor{
		cfg:        cfg,
		id:         set.ID,
		logger:     set.Logger,
		telemetry:  tb,
		required:   cfg.requiredReasons(),
		metadata:   md,
		assertions: as,
		selector:   sel,
		scrubber:   scrubber,
		pricer:     pr,
		now:        time.Now,
		open:       map[pcommon.TraceID]*traceBuffer{},
		order:      list.New(),
		closed:     newRecentTraces(cfg.Limits.MaxOpenTraces, cfg.Limits.MaxBufferedBytes/closedIDsShare, idsTelemetry{tb}),
		dropLog:    droplog.New(set.ID, "processor"),
		flushRetry: flushRetry,
		stop:       make(chan struct{}),
		done:       make(chan struct{}),
	}, nil
}

// Start opens the write-ahead storage, restores the cases that were open when the process
// last stopped, and starts the sweeper. The shared-component wrapper calls it once for both
// pipelines.
func (p *caseProcessor) Start(ctx context.Context, host component.Host) error {
	if p.cfg.Storage != nil {
		w, err := openWAL(ctx, host, *p.cfg.Storage, p.id, p.cfg.Limits.MaxOpenTraces, p.cfg.Limits.MaxBufferedBytes/closedIDsShare, idsTelemetry{p.telemetry}, p.logger)
		if err != nil {
			return err
		}
		p.wal = w
		if err := p.restore(ctx); err != nil {
			return err
		}
	}
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
		select {
		case <-p.done:
		case <-ctx.Done():
			// The sweep is still in a send that ignores its cancellation: leave it, with the
			// storage open under it; what it holds is restored from storage on the next start.
			// Without storage, what would go with the process is counted now.
			err := fmt.Errorf("replay_case: shutdown: the sweep did not stop before the deadline: %w", ctx.Err())
			p.abandonAtDeadline(context.WithoutCancel(ctx), err)
			return err
		}
	}
	err := p.flush(ctx)
	err = errors.Join(err, p.wal.close(ctx))
	p.telemetry.Shutdown()
	return err
}

// errBackpressure refuses new data while closed cases cannot be sent. It is not permanent, so
// the OTLP receiver answers 503 / UNAVAILABLE and the client retries later, as with the
// memory_limiter processor: what was acknowledged is kept, what is refused was never taken.
var errBackpressure = errors.New("replay_case: the next consumer is refusing closed cases; retry later")

// ConsumeTraces buffers spans per trace. It refuses the request, before taking anything from
// it, while closed cases wait for the next consumer (admit). Cases closed by a limit are sent
// in batches; their delivery errors stay with the processor, which keeps and resends them: the
// caller's own spans were accepted.
func (p *caseProcessor) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	if err := p.admit(ctx); err != nil {
		p.telemetry.ProcessorReplayCaseRefused.Add(ctx, int64(td.SpanCount()), signalTraces)
		return err
	}
	requested := td.SpanCount() // what a refusal refuses, counted before chunks are taken out
	trusted := ptrace.NewTraces()
	if p.cfg.TrustedUpstream {
		trusted = takeCaseSpans(td)
	}
	chunks := splitTraces(td)
	kafka := fromKafka(ctx)
	for _, c := range chunks {
		c.fromKafka = kafka
	}
	p.scrubTraceChunks(chunks, false) // before anything stores or holds them (scrub_intake.go)
	// Stored before sanitizing, so that a restore repairs and flags the same way.
	if err := p.wal.writeTraces(ctx, chunks); err != nil {
		p.telemetry.ProcessorReplayCaseRefused.Add(ctx, int64(requested), signalTraces)
		return err
	}
	items := 0
	for _, c := range chunks {
		items += c.items
	}
	fixed, stopped := p.bufferTraces(chunks)
	p.countSanitized(ctx, signalTraces, fixed)
	p.telemetry.ProcessorReplayCaseReceived.Add(ctx, int64(items), signalTraces)

	var err error
	if trusted.SpanCount() > 0 {
		// Case spans from a trusted tier were not buffered: their delivery error is the caller's.
		err = p.nextTraces.ConsumeTraces(ctx, trusted)
	}
	if stopped {
		return errors.Join(err, p.flush(ctx))
	}
	p.drainIfDue(ctx)
	return err
}

// ConsumeLogs joins GenAI log events (event name gen_ai.*, with a trace id) into their trace's
// buffer and passes every other log record on.
func (p *caseProcessor) ConsumeLogs(ctx context.Context, ld plog.Logs) error {
	p.mu.Lock()
	stopped := p.stopped
	p.mu.Unlock()
	if p.nextTraces == nil || stopped {
		p.countSanitized(ctx, signalLogs, sanitizeLogs(ld))
		p.scrubber.Logs(ld, &scrub.Report{})
		return p.nextLogs.ConsumeLogs(ctx, ld)
	}
	return p.joinLogs(ctx, ld)
}

// joinLogs is ConsumeLogs once the processor was found running: Shutdown may have flushed the
// buffers since, which bufferLogs reports.
func (p *caseProcessor) joinLogs(ctx context.Context, ld plog.Logs) error {
	if err := p.admit(ctx); err != nil {
		p.telemetry.ProcessorReplayCaseRefused.Add(ctx, int64(ld.LogRecordCount()), signalLogs)
		return err
	}
	requested := ld.LogRecordCount() // what a refusal refuses: splitLogs takes the GenAI events out
	chunks := splitLogs(ld, p.cfg.ForwardJoinedLogs)
	kafka := fromKafka(ctx)
	for _, c := range chunks {
		c.fromKafka = kafka
	}
	p.scrubLogChunks(chunks, false)
	if err := p.wal.writeLogs(ctx, chunks); err != nil {
		p.telemetry.ProcessorReplayCaseRefused.Add(ctx, int64(requested), signalLogs)
		return err
	}
	fixed := sanitizeLogs(ld) // the records passed on
	items := 0
	for _, c := range chunks {
		items += c.items
	}
	buffered, stopped := p.bufferLogs(chunks)
	fixed.add(buffered)
	p.countSanitized(ctx, signalLogs, fixed)
	p.telemetry.ProcessorReplayCaseReceived.Add(ctx, int64(items), signalLogs)
	var err error
	if stopped {
		// Shutdown flushed the buffers after this request passed its check: flush again, as
		// ConsumeTraces does, or the events just buffered would wait in a buffer nobody sweeps.
		err = p.flush(ctx)
	} else {
		p.drainIfDue(ctx)
	}
	if ld.LogRecordCount() > 0 {
		p.scrubber.Logs(ld, &scrub.Report{}) // what passes on is scrubbed too
		return errors.Join(err, p.nextLogs.ConsumeLogs(ctx, ld))
	}
	return err
}

// countSanitized counts what sanitizing a request changed; signal is signalTraces or signalLogs.
func (p *caseProcessor) countSanitized(ctx context.Context, signal metric.AddOption, s sanitized) {
	if s.reserved > 0 {
		p.telemetry.ProcessorReplayCaseReservedAttributes.Add(ctx, int64(s.reserved), signal)
	}
	if s.repaired > 0 {
		p.telemetry.ProcessorReplayCaseInvalidUtf8.Add(ctx, int64(s.repaired), signal)
	}
}

// MutatesData is true: the processor moves spans and log records into its buffers instead of
// copying them, so the pipeline hands it data no other consumer shares.
func (p *caseProcessor) Capabilities() consumer.Capabilities {
	return consumer.Capabilities{MutatesData: true}
}

// The signal attribute of the per-request metrics, built once rather than per request.
var (
	signalTraces = metric.WithAttributes(attribute.String("signal", "traces"))
	signalLogs   = metric.WithAttributes(attribute.String("signal", "logs"))
)
