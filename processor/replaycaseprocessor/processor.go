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

	"github.com/reprise-dev/reprise/normalize"
	"github.com/reprise-dev/reprise/processor/replaycaseprocessor/internal/metadata"
	"github.com/reprise-dev/reprise/replaycase"
	"github.com/reprise-dev/reprise/scrub"
)

// caseProcessor buffers spans and GenAI log events per trace and closes each trace into one
// replay case. All buffer state is guarded by mu; building and emitting cases happens outside
// the lock.
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

	users   int // pipelines sharing this instance
	release func()
	stop    chan struct{}
	done    chan struct{}
}

// traceBuffer is one open case.
type traceBuffer struct {
	id        pcommon.TraceID
	spans     ptrace.Traces
	events    plog.Logs
	items     int
	bytes     int64
	firstSeen time.Time
	lastSeen  time.Time
	rootSeen  bool
	late      bool // the trace had already been closed when this fragment started
	elem      *list.Element
}

// closing is a buffer taken out of the open set, with why.
type closing struct {
	buf    *traceBuffer
	cause  replaycase.CloseCause
	detail string
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

// Start starts the sweeper once for all pipelines that share the instance.
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

// Shutdown flushes every open case on the first call from either pipeline. The collector
// shuts components down upstream first, so at that moment the traces exporters downstream of
// this processor are still running. Cases still waiting for their root span are quarantined
// with reason "shutdown". Spans that still arrive afterwards (from a receiver of the other
// pipeline) are closed into cases at once; log events pass through unchanged.
func (p *caseProcessor) Shutdown(ctx context.Context) error {
	sharedMu.Lock()
	p.users--
	last := p.users <= 0
	sharedMu.Unlock()

	var err error
	p.mu.Lock()
	first, started := !p.stopped, p.started
	p.stopped = true
	p.mu.Unlock()
	if first {
		if started {
			close(p.stop)
			<-p.done
		}
		err = p.flush(ctx)
	}
	if last {
		p.release()
		p.telemetry.Shutdown()
	}
	return err
}

// flush closes every open case as of shutdown.
func (p *caseProcessor) flush(ctx context.Context) error {
	p.mu.Lock()
	var all []closing
	for e := p.order.Front(); e != nil; e = p.order.Front() {
		all = append(all, p.take(e.Value.(*traceBuffer), replaycase.ClosedShutdown, "collector shutdown"))
	}
	p.mu.Unlock()
	return p.emit(ctx, all)
}

func (p *caseProcessor) sweepLoop() {
	defer close(p.done)
	t := time.NewTicker(sweepInterval(p.cfg))
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			if err := p.sweep(context.Background()); err != nil {
				p.logger.Error("emitting closed cases failed", zap.Error(err))
			}
		}
	}
}

// sweepInterval checks often enough to honour the shortest timer within a quarter of it.
func sweepInterval(cfg *Config) time.Duration {
	d := min(cfg.RootGracePeriod, cfg.IdleTimeout) / 4
	return min(max(d, 5*time.Millisecond), time.Second)
}

// sweep closes the cases whose time has come.
func (p *caseProcessor) sweep(ctx context.Context) error {
	p.mu.Lock()
	now := p.now()
	var due []closing
	for e := p.order.Front(); e != nil; {
		b := e.Value.(*traceBuffer)
		e = e.Next()
		idle := now.Sub(b.lastSeen)
		switch {
		case b.rootSeen && idle >= p.cfg.RootGracePeriod:
			due = append(due, p.take(b, replaycase.ClosedRootEnded, ""))
		case idle >= p.cfg.IdleTimeout:
			due = append(due, p.take(b, replaycase.ClosedIdle, fmt.Sprintf("nothing arrived for %s", p.cfg.IdleTimeout)))
		case now.Sub(b.firstSeen) >= p.cfg.MaxAge:
			due = append(due, p.take(b, replaycase.ClosedMaxAge, fmt.Sprintf("open for %s", p.cfg.MaxAge)))
		}
	}
	p.mu.Unlock()
	return p.emit(ctx, due)
}

// ConsumeTraces buffers spans per trace. Cases closed early by a limit are emitted before it
// returns, so limits apply back-pressure and their errors reach the caller.
func (p *tracesProcessor) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
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
func (p *logsProcessor) ConsumeLogs(ctx context.Context, ld plog.Logs) error {
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

// buffer returns the open buffer of a trace, opening one if needed. Caller holds mu.
func (p *caseProcessor) buffer(id pcommon.TraceID, now time.Time) *traceBuffer {
	b, ok := p.open[id]
	if !ok {
		b = &traceBuffer{id: id, spans: ptrace.NewTraces(), events: plog.NewLogs(), firstSeen: now, late: p.closed.has(id)}
		b.elem = p.order.PushBack(b)
		p.open[id] = b
		p.telemetry.ProcessorReplayCaseOpenCases.Add(context.Background(), 1)
	}
	b.lastSeen = now
	return b
}

var (
	tracesSizer ptrace.ProtoMarshaler
	logsSizer   plog.ProtoMarshaler
)

// grow accounts for items (spans or events) of the given encoded size added to b. Caller holds mu.
func (p *caseProcessor) grow(b *traceBuffer, items int, size int64) {
	b.items += items
	b.bytes += size
	p.bytes += size
	if b.late {
		p.telemetry.ProcessorReplayCaseLateSpans.Add(context.Background(), int64(items))
	}
	p.telemetry.ProcessorReplayCaseBufferedSpans.Add(context.Background(), int64(items))
	p.telemetry.ProcessorReplayCaseBufferedBytes.Add(context.Background(), size)
}

func (p *caseProcessor) checkSpanLimit(b *traceBuffer, due []closing) []closing {
	if b.items <= p.cfg.Limits.MaxSpansPerTrace || b.elem == nil {
		return due
	}
	p.telemetry.ProcessorReplayCaseEvictions.Add(context.Background(), 1, metric.WithAttributes(attribute.String("limit", "max_spans_per_trace")))
	return append(due, p.take(b, replaycase.ClosedSpanLimit, fmt.Sprintf("trace reached limits.max_spans_per_trace (%d)", p.cfg.Limits.MaxSpansPerTrace)))
}

// enforceLimits closes the oldest open cases until the open-trace and byte limits hold.
func (p *caseProcessor) enforceLimits(due []closing) []closing {
	for p.order.Len() > 0 {
		var limit string
		var value int64
		switch {
		case len(p.open) > p.cfg.Limits.MaxOpenTraces:
			limit, value = "max_open_traces", int64(p.cfg.Limits.MaxOpenTraces)
		case p.bytes > p.cfg.Limits.MaxBufferedBytes:
			limit, value = "max_buffered_bytes", p.cfg.Limits.MaxBufferedBytes
		default:
			return due
		}
		oldest := p.order.Front().Value.(*traceBuffer)
		p.telemetry.ProcessorReplayCaseEvictions.Add(context.Background(), 1, metric.WithAttributes(attribute.String("limit", limit)))
		due = append(due, p.take(oldest, replaycase.ClosedEvicted, fmt.Sprintf("closed early: limits.%s (%d) reached", limit, value)))
	}
	return due
}

// take removes b from the open set. Caller holds mu.
func (p *caseProcessor) take(b *traceBuffer, cause replaycase.CloseCause, detail string) closing {
	p.order.Remove(b.elem)
	b.elem = nil
	delete(p.open, b.id)
	p.closed.add(b.id)
	p.bytes -= b.bytes
	ctx := context.Background()
	p.telemetry.ProcessorReplayCaseOpenCases.Add(ctx, -1)
	p.telemetry.ProcessorReplayCaseBufferedSpans.Add(ctx, -int64(b.items))
	p.telemetry.ProcessorReplayCaseBufferedBytes.Add(ctx, -b.bytes)
	return closing{buf: b, cause: cause, detail: detail}
}

// emit builds the cases of closed buffers and sends them on: cases (and traces without GenAI
// telemetry, unchanged) to the traces pipeline, and events of traces that were not cases to the
// logs pipeline.
func (p *caseProcessor) emit(ctx context.Context, due []closing) error {
	if len(due) == 0 {
		return nil
	}
	out := ptrace.NewTraces()
	passLogs := plog.NewLogs()
	var ids []string
	for _, cl := range due {
		c, ok := p.buildCase(ctx, cl)
		if !ok {
			p.telemetry.ProcessorReplayCasePassthroughTraces.Add(ctx, 1)
			cl.buf.spans.ResourceSpans().MoveAndAppendTo(out.ResourceSpans())
			cl.buf.events.ResourceLogs().MoveAndAppendTo(passLogs.ResourceLogs())
			continue
		}
		if err := replaycase.Encode(c, out); err != nil {
			p.logger.Error("cannot encode case", zap.String("case_id", c.CaseID), zap.Error(err))
			continue
		}
		ids = append(ids, c.CaseID)
		p.record(ctx, c)
	}
	var err error
	if out.SpanCount() > 0 {
		if err = p.nextTraces.ConsumeTraces(ctx, out); err != nil {
			p.telemetry.ProcessorReplayCaseEmitFailures.Add(ctx, int64(len(ids)))
			p.logger.Error("the next consumer refused replay cases", zap.Strings("case_ids", ids), zap.Error(err))
		}
	}
	if passLogs.LogRecordCount() > 0 && p.nextLogs != nil {
		err = errors.Join(err, p.nextLogs.ConsumeLogs(ctx, passLogs))
	}
	return err
}

// buildCase assembles and judges one case. ok is false for a trace without GenAI telemetry.
func (p *caseProcessor) buildCase(ctx context.Context, cl closing) (*replaycase.Case, bool) {
	b := cl.buf
	// Scrub before anything is read from the telemetry: the case, its raw spans and a trace
	// passed on unchanged all come from the scrubbed copy.
	var scrubbed scrub.Report
	p.scrubber.Traces(b.spans, &scrubbed)
	p.scrubber.Logs(b.events, &scrubbed)
	c, findings, genAI := normalize.Build(b.spans, b.events)
	if !genAI {
		return nil, false
	}
	c.ClosedBy = cl.cause
	c.Scrub = replaycase.ScrubReport{PolicyHash: p.scrubber.PolicyHash(), Counts: scrubbed.Counts}
	for _, kind := range scrubbed.Quarantine {
		c.Quarantine(replaycase.ReasonSecretDetected, fmt.Sprintf("found %s (scrub action: quarantine); it is masked in everything written", kind), "")
	}
	for _, f := range findings {
		if p.required[f.Code] {
			c.Quarantine(f.Code, f.Detail, f.SpanID)
		}
	}
	hasRoot := c.Provenance.RootSpanID != ""
	switch {
	case cl.cause == replaycase.ClosedEvicted:
		c.Quarantine(replaycase.ReasonEvicted, cl.detail, "")
	case cl.cause == replaycase.ClosedSpanLimit:
		c.Quarantine(replaycase.ReasonSpanLimit, cl.detail, "")
	case cl.cause == replaycase.ClosedShutdown && !hasRoot:
		c.Quarantine(replaycase.ReasonShutdown, "flushed at shutdown before the root span arrived", "")
	case cl.cause == replaycase.ClosedMaxAge && !hasRoot:
		c.Quarantine(replaycase.ReasonMaxAge, cl.detail, "")
	}
	if b.late {
		c.Quarantine(replaycase.ReasonLateSpans, "spans or events arrived after this trace's case was closed; this is a fragment", "")
	}
	c.Metadata = p.metadata.eval(ctx, b.spans, c.Provenance.RootSpanID)
	c.Assertions = p.assertions.eval(ctx, b.spans, c.Provenance.RootSpanID)
	if p.cfg.RawSpans == rawAll || (p.cfg.RawSpans == rawQuarantined && c.Status == replaycase.StatusQuarantined) {
		c.RawSpans, c.RawEvents = rawTelemetry(b)
	}
	return c, true
}

// rawTelemetry is the OTLP protobuf of the buffer's spans and of its joined log events.
func rawTelemetry(b *traceBuffer) (spans, events []byte) {
	spans, _ = tracesSizer.MarshalTraces(b.spans)
	if b.events.LogRecordCount() > 0 {
		events, _ = logsSizer.MarshalLogs(b.events)
	}
	return spans, events
}

func (p *caseProcessor) record(ctx context.Context, c *replaycase.Case) {
	p.telemetry.ProcessorReplayCaseCasesClosed.Add(ctx, 1, metric.WithAttributes(
		attribute.String("status", string(c.Status)), attribute.String("closed_by", string(c.ClosedBy))))
	for _, r := range c.Reasons {
		p.telemetry.ProcessorReplayCaseQuarantineReasons.Add(ctx, 1, metric.WithAttributes(attribute.String("reason", r.Code)))
	}
}
