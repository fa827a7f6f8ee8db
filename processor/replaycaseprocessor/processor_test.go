package replaycaseprocessor

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/processor/replaycaseprocessor/internal/metadatatest"
	"github.com/reprise-dev/reprise/replaycase"
)

// harness runs one shared processor instance in a traces and a logs pipeline, with a clock the
// test moves. The sweeper goroutine is not started unless a test calls start.
type harness struct {
	t      *testing.T
	p      *caseProcessor
	traces processor.Traces
	logs   processor.Logs
	sink   *consumertest.TracesSink
	logOut *consumertest.LogsSink
	tel    *componenttest.Telemetry
	clock  time.Time
}

func newHarness(t *testing.T, mutate func(*Config)) *harness {
	t.Helper()
	cfg := createDefaultConfig().(*Config)
	if mutate != nil {
		mutate(cfg)
	}
	require.NoError(t, cfg.Validate())
	h := &harness{t: t, sink: new(consumertest.TracesSink), logOut: new(consumertest.LogsSink), tel: componenttest.NewTelemetry(), clock: time.Unix(1_800_000_000, 0)}
	set := metadatatest.NewSettings(h.tel)
	var err error
	h.traces, err = createTraces(context.Background(), set, cfg, h.sink)
	require.NoError(t, err)
	h.logs, err = createLogs(context.Background(), set, cfg, h.logOut)
	require.NoError(t, err)
	h.p = h.traces.(*tracesProcessor).Unwrap()
	require.Same(t, h.p, h.logs.(*logsProcessor).Unwrap(), "traces and logs share one instance")
	h.p.now = func() time.Time { return h.clock }
	h.p.dropLog = zap.NewNop() // tests that check drops install an observer
	t.Cleanup(func() { _ = h.tel.Shutdown(context.Background()) })
	return h
}

// observeDropLog replaces the unsampled logger of drops (internal/droplog) with an observer of
// its warnings.
func (h *harness) observeDropLog() *observer.ObservedLogs {
	core, logs := observer.New(zap.WarnLevel)
	h.p.dropLog = zap.New(core)
	return logs
}

func (h *harness) sendTraces(td ptrace.Traces) {
	h.t.Helper()
	require.NoError(h.t, h.traces.ConsumeTraces(context.Background(), td))
}

func (h *harness) sendLogs(ld plog.Logs) {
	h.t.Helper()
	require.NoError(h.t, h.logs.ConsumeLogs(context.Background(), ld))
}

// advance moves the clock and runs one sweep.
func (h *harness) advance(d time.Duration) {
	h.t.Helper()
	h.clock = h.clock.Add(d)
	require.NoError(h.t, h.p.sweep(context.Background()))
}

func (h *harness) shutdown() {
	h.t.Helper()
	require.NoError(h.t, h.traces.Shutdown(context.Background()))
	require.NoError(h.t, h.logs.Shutdown(context.Background()))
}

// cases decodes everything the processor emitted so far.
func (h *harness) cases() []*replaycase.Case {
	h.t.Helper()
	var out []*replaycase.Case
	for _, td := range h.sink.AllTraces() {
		cs, err := replaycase.Decode(td)
		require.NoError(h.t, err)
		out = append(out, cs...)
	}
	return out
}

func reasonCodes(c *replaycase.Case) []string {
	var codes []string
	for _, r := range c.Reasons {
		codes = append(codes, r.Code)
	}
	return codes
}

func TestOTelEventsFixtureBecomesOneAcceptedCase(t *testing.T) {
	h := newHarness(t, nil)
	h.sendTraces(testfixtures.Traces(t, testfixtures.OTelEvents))
	h.sendLogs(testfixtures.Logs(t, testfixtures.OTelEvents))
	assert.Zero(t, h.logOut.LogRecordCount(), "joined GenAI events are not passed on by default")
	h.advance(time.Second)
	assert.Empty(t, h.cases(), "still inside the root grace period")
	h.advance(time.Second)

	cases := h.cases()
	require.Len(t, cases, 1)
	c := cases[0]
	assert.Equal(t, replaycase.StatusAccepted, c.Status, "reasons: %v", c.Reasons)
	assert.Equal(t, replaycase.ClosedRootEnded, c.ClosedBy)
	assert.Empty(t, c.RawSpans, "accepted cases do not keep raw spans by default")

	var llm int
	for _, st := range c.Steps {
		if st.Kind == replaycase.StepLLM {
			llm++
		}
	}
	assert.Equal(t, 2, llm)
	require.Len(t, c.ToolCalls, 1)
	assert.Equal(t, replaycase.ToolCall{
		ID: "call_1_0", Name: "get_weather", Arguments: `{"city":"Paris","unit":"celsius"}`,
		Result:      `{"city":"Paris","temperature":14,"unit":"celsius","sky":"overcast"}`,
		RequestedBy: "52f9b6ad1109142e", SpanID: "7315edc4f9534814",
	}, c.ToolCalls[0])
	require.Len(t, c.RetrievalRefs, 1)
	docs := c.RetrievalRefs[0].Documents
	require.Len(t, docs, 2)
	assert.Equal(t, "doc-paris-climate", docs[0].ID)
	assert.InDelta(t, 0.91, *docs[0].Score, 1e-9)
	assert.Equal(t, "doc-weather-api", docs[1].ID)
	assert.InDelta(t, 0.77, *docs[1].Score, 1e-9)
	require.Len(t, c.InputMessages, 2)
	assert.Equal(t, "system", c.InputMessages[0].Role)
	assert.Contains(t, c.InputMessages[0].Parts[0].Content, "You are a weather assistant.")
	assert.Equal(t, "user", c.InputMessages[1].Role)
	assert.Equal(t, "What is the weather in Paris today?", c.InputMessages[1].Parts[0].Content)
	require.NotNil(t, c.FinalOutput)
	assert.Equal(t, `Answer #2: based on {"city":"Paris","temperature":14,"unit":"celsius","sky":"overcast"} it is mild in Paris.`, c.FinalOutput.Parts[0].Content)
	assert.Equal(t, replaycase.Usage{InputTokens: 180, OutputTokens: 34, TotalTokens: 214}, c.Usage)

	metadatatest.AssertEqualProcessorReplayCaseCasesClosed(t, h.tel, []metricdata.DataPoint[int64]{{
		Value:      1,
		Attributes: attribute.NewSet(attribute.String("status", "accepted"), attribute.String("closed_by", "root_ended")),
	}}, metricdatatest.IgnoreTimestamp())
	metadatatest.AssertEqualProcessorReplayCaseOpenCases(t, h.tel, []metricdata.DataPoint[int64]{{Value: 0}}, metricdatatest.IgnoreTimestamp())
	metadatatest.AssertEqualProcessorReplayCaseBufferedSpans(t, h.tel, []metricdata.DataPoint[int64]{{Value: 0}}, metricdatatest.IgnoreTimestamp())
	h.shutdown()
}

func TestTraceloopFixtureGivesTheSameCase(t *testing.T) {
	h := newHarness(t, nil)
	h.sendTraces(testfixtures.Traces(t, testfixtures.Traceloop))
	h.advance(3 * time.Second)
	cases := h.cases()
	require.Len(t, cases, 1)
	c := cases[0]
	assert.Equal(t, replaycase.StatusAccepted, c.Status, "reasons: %v", c.Reasons)
	assert.Equal(t, "weather-bot", c.AgentName)
	require.Len(t, c.ToolCalls, 1)
	assert.Equal(t, `{"city":"Paris","unit":"celsius"}`, c.ToolCalls[0].Arguments)
	assert.Equal(t, `Answer #2: based on {"city":"Paris","temperature":14,"unit":"celsius","sky":"overcast"} it is mild in Paris.`, c.FinalOutput.Parts[0].Content)
	assert.Equal(t, replaycase.Usage{InputTokens: 180, OutputTokens: 34, TotalTokens: 214}, c.Usage)
	h.shutdown()
}

// Closed cases are counted by status and close cause, and quarantine reasons by code, however
// many cases share them (the attribute sets are built once per value: case_metric_attrs.go).
func TestClosedCasesAreCountedByStatusAndReason(t *testing.T) {
	h := newHarness(t, nil)
	for i, run := range []string{testfixtures.OTelNoContent, testfixtures.OTelEvents, testfixtures.OTelNoContent} {
		td, ld := testfixtures.Traces(t, run), testfixtures.Logs(t, run)
		testfixtures.WithTraceID(td, ld, i+1)
		h.sendLogs(ld)
		h.sendTraces(td)
	}
	h.advance(3 * time.Second)
	cases := h.cases()
	require.Len(t, cases, 3)
	perCase := map[string]int64{}
	for _, c := range cases {
		if c.Status == replaycase.StatusQuarantined {
			for _, r := range c.Reasons {
				perCase[r.Code]++
			}
		}
	}
	require.Contains(t, perCase, replaycase.ReasonNoInputMessages)
	var reasons []metricdata.DataPoint[int64]
	for code, n := range perCase {
		reasons = append(reasons, metricdata.DataPoint[int64]{Value: n, Attributes: attribute.NewSet(attribute.String("reason", code))})
	}
	metadatatest.AssertEqualProcessorReplayCaseCasesClosed(t, h.tel, []metricdata.DataPoint[int64]{
		{Value: 1, Attributes: attribute.NewSet(attribute.String("status", "accepted"), attribute.String("closed_by", "root_ended"))},
		{Value: 2, Attributes: attribute.NewSet(attribute.String("status", "quarantined"), attribute.String("closed_by", "root_ended"))},
	}, metricdatatest.IgnoreTimestamp())
	metadatatest.AssertEqualProcessorReplayCaseQuarantineReasons(t, h.tel, reasons, metricdatatest.IgnoreTimestamp())
	h.shutdown()
}

func TestNoContentFixtureIsQuarantinedNamingTheMissingMessages(t *testing.T) {
	h := newHarness(t, nil)
	h.sendLogs(testfixtures.Logs(t, testfixtures.OTelNoContent))
	h.sendTraces(testfixtures.Traces(t, testfixtures.OTelNoContent))
	h.advance(3 * time.Second)
	cases := h.cases()
	require.Len(t, cases, 1)
	c := cases[0]
	assert.Equal(t, replaycase.StatusQuarantined, c.Status)
	assert.Contains(t, reasonCodes(c), replaycase.ReasonNoInputMessages)
	for _, r := range c.Reasons {
		if r.Code == replaycase.ReasonNoInputMessages {
			assert.Contains(t, r.Detail, "no input messages")
			assert.NotEmpty(t, r.SpanID)
		}
	}
	// The evidence that was found stays in the case, with the raw telemetry for a re-drive.
	assert.Len(t, c.Steps, 4)
	assert.Len(t, c.ToolCalls, 1)
	raw, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(c.RawSpans)
	require.NoError(t, err)
	assert.Equal(t, 5, raw.SpanCount())
	events, err := (&plog.ProtoUnmarshaler{}).UnmarshalLogs(c.RawEvents)
	require.NoError(t, err)
	assert.Equal(t, 8, events.LogRecordCount())
	h.shutdown()
}

// Log events join their spans whether they arrive before the spans, after them in the same
// moment, or in a later batch while the case is still open.
func TestLogEventsJoinInAnyOrder(t *testing.T) {
	reference := func() *replaycase.Case {
		h := newHarness(t, nil)
		h.sendTraces(testfixtures.Traces(t, testfixtures.OTelEvents))
		h.sendLogs(testfixtures.Logs(t, testfixtures.OTelEvents))
		h.advance(3 * time.Second)
		return h.cases()[0]
	}()
	require.Equal(t, replaycase.StatusAccepted, reference.Status)

	orders := map[string]func(h *harness){
		"logs before spans": func(h *harness) {
			h.sendLogs(testfixtures.Logs(t, testfixtures.OTelEvents))
			h.sendTraces(testfixtures.Traces(t, testfixtures.OTelEvents))
		},
		"logs in a later batch": func(h *harness) {
			h.sendTraces(testfixtures.Traces(t, testfixtures.OTelEvents))
			h.advance(time.Second)
			h.sendLogs(testfixtures.Logs(t, testfixtures.OTelEvents))
		},
		"spans and logs split over batches": func(h *harness) {
			td := testfixtures.Traces(t, testfixtures.OTelEvents)
			first := ptrace.NewTraces()
			td.ResourceSpans().At(0).CopyTo(first.ResourceSpans().AppendEmpty())
			first.ResourceSpans().At(0).ScopeSpans().RemoveIf(func(ss ptrace.ScopeSpans) bool { return ss.Scope().Name() != "holdout-agent" })
			td.ResourceSpans().At(0).ScopeSpans().RemoveIf(func(ss ptrace.ScopeSpans) bool { return ss.Scope().Name() == "holdout-agent" })
			ld := testfixtures.Logs(t, testfixtures.OTelEvents)
			h.sendTraces(first) // root, tool and retrieval first
			h.advance(500 * time.Millisecond)
			h.sendLogs(ld)
			h.advance(500 * time.Millisecond)
			h.sendTraces(td) // the chat spans last
		},
	}
	for name, send := range orders {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, nil)
			send(h)
			h.advance(3 * time.Second)
			cases := h.cases()
			require.Len(t, cases, 1)
			assert.Equal(t, reference, cases[0])
			h.shutdown()
		})
	}
}

func withoutRoot(td ptrace.Traces) ptrace.Traces {
	td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().RemoveIf(func(sp ptrace.Span) bool { return sp.ParentSpanID().IsEmpty() })
	return td
}

func TestRootlessTraceClosesAtIdleTimeoutQuarantined(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.IdleTimeout = 10 * time.Second })
	h.sendTraces(withoutRoot(testfixtures.Traces(t, testfixtures.Traceloop)))
	h.advance(9 * time.Second)
	assert.Empty(t, h.cases(), "no root: the grace period does not apply")
	h.advance(time.Second)
	cases := h.cases()
	require.Len(t, cases, 1)
	c := cases[0]
	assert.Equal(t, replaycase.StatusQuarantined, c.Status)
	assert.Equal(t, replaycase.ClosedIdle, c.ClosedBy)
	assert.Equal(t, []string{replaycase.ReasonNoRootSpan}, reasonCodes(c))
	assert.Len(t, c.Steps, 4, "the evidence found is kept")
	h.shutdown()
}

func TestMaxAgeClosesAChattyRootlessTrace(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.IdleTimeout, c.MaxAge = 10*time.Second, 20*time.Second })
	td := withoutRoot(testfixtures.Traces(t, testfixtures.Traceloop))
	spans := td.ResourceSpans().At(0).ScopeSpans()
	for i := 0; i < 4; i++ { // one span every 6 s keeps the trace from going idle
		one := ptrace.NewTraces()
		rs := one.ResourceSpans().AppendEmpty()
		ss := rs.ScopeSpans().AppendEmpty()
		spans.At(i / 2).Spans().At(i % 2).CopyTo(ss.Spans().AppendEmpty())
		h.sendTraces(one)
		h.advance(6 * time.Second)
	}
	cases := h.cases()
	require.Len(t, cases, 1)
	assert.Equal(t, replaycase.ClosedMaxAge, cases[0].ClosedBy)
	assert.ElementsMatch(t, []string{replaycase.ReasonNoRootSpan, replaycase.ReasonMaxAge}, reasonCodes(cases[0]))
	h.shutdown()
}

func TestFloodBeyondOpenTraceLimitLosesNothing(t *testing.T) {
	const limit, traces = 10, 100
	h := newHarness(t, func(c *Config) { c.Limits.MaxOpenTraces = limit })
	for i := 0; i < traces; i++ {
		td, ld := testfixtures.Traces(t, testfixtures.OTelEvents), testfixtures.Logs(t, testfixtures.OTelEvents)
		testfixtures.WithTraceID(td, ld, i)
		h.sendLogs(ld)
		h.sendTraces(td)
	}
	assert.Len(t, h.p.open, limit)
	h.shutdown()

	cases := h.cases()
	require.Len(t, cases, traces, "traces in = cases out")
	ids := map[string]bool{}
	var evicted, accepted int
	for _, c := range cases {
		ids[c.Provenance.TraceID] = true
		switch {
		case c.ClosedBy == replaycase.ClosedEvicted:
			evicted++
			assert.Equal(t, replaycase.StatusQuarantined, c.Status)
			assert.Equal(t, []string{replaycase.ReasonEvicted}, reasonCodes(c))
			assert.Contains(t, c.Reasons[0].Detail, "limits.max_open_traces (10)")
		case c.ClosedBy == replaycase.ClosedShutdown:
			accepted++
			assert.Equal(t, replaycase.StatusAccepted, c.Status, "complete runs flushed at shutdown are judged on their evidence")
		}
		assert.Equal(t, int64(5), c.Provenance.SpanCount)
		assert.Equal(t, int64(8), c.Provenance.EventCount)
	}
	assert.Len(t, ids, traces)
	assert.Equal(t, traces-limit, evicted)
	assert.Equal(t, limit, accepted)
	metadatatest.AssertEqualProcessorReplayCaseEvictions(t, h.tel, []metricdata.DataPoint[int64]{{
		Value: traces - limit, Attributes: attribute.NewSet(attribute.String("limit", "max_open_traces")),
	}}, metricdatatest.IgnoreTimestamp())
}

func TestByteLimitEvictsOldest(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Limits.MaxBufferedBytes = 12_000 })
	for i := 0; i < 5; i++ {
		td := testfixtures.Traces(t, testfixtures.Traceloop)
		testfixtures.WithTraceID(td, plog.NewLogs(), i)
		h.sendTraces(td)
	}
	assert.LessOrEqual(t, h.p.bytes, int64(12_000))
	h.shutdown()
	cases := h.cases()
	require.Len(t, cases, 5)
	assert.Equal(t, replaycase.ClosedEvicted, cases[0].ClosedBy)
	assert.Contains(t, cases[0].Reasons[0].Detail, "limits.max_buffered_bytes")
}

// Closing a case does not free its memory until it is sent, so the byte limit must close open
// cases only until the open ones fit: crossing it by a few kB closes the oldest case, not all.
func TestByteLimitClosesOnlyWhatItMust(t *testing.T) {
	h := newHarness(t, nil)
	for i := 0; i < 10; i++ {
		td := testfixtures.Traces(t, testfixtures.Traceloop)
		testfixtures.WithTraceID(td, plog.NewLogs(), i)
		h.sendTraces(td)
	}
	h.p.mu.Lock()
	h.p.cfg.Limits.MaxBufferedBytes = h.p.bytes + 100 // the next run crosses it by a few kB
	h.p.mu.Unlock()
	td := testfixtures.Traces(t, testfixtures.Traceloop)
	testfixtures.WithTraceID(td, plog.NewLogs(), 99)
	h.sendTraces(td)
	h.p.mu.Lock()
	open := len(h.p.open)
	h.p.mu.Unlock()
	assert.Equal(t, 10, open, "one case closed to make room, the other ten and the new one open")
	h.shutdown()
	evicted := 0
	for _, c := range h.cases() {
		if c.ClosedBy == replaycase.ClosedEvicted {
			evicted++
		}
	}
	assert.Equal(t, 1, evicted)
}

// Events that arrive while Shutdown runs (ConsumeLogs found the processor running, Shutdown
// then flushed) are flushed by the request itself, as spans are, not left in a buffer that is
// never swept.
func TestEventsBufferedDuringShutdownAreFlushed(t *testing.T) {
	h := newHarness(t, nil)
	require.NoError(t, h.p.Start(context.Background(), nil))
	require.NoError(t, h.p.Shutdown(context.Background()))
	ld := testfixtures.Logs(t, testfixtures.OTelEvents)
	events := ld.LogRecordCount()
	require.NoError(t, h.p.joinLogs(context.Background(), ld))
	h.p.mu.Lock()
	open := len(h.p.open)
	h.p.mu.Unlock()
	assert.Zero(t, open)
	// Events without their spans are no case: they leave on the logs pipeline.
	assert.Empty(t, h.cases())
	assert.Equal(t, events, h.logOut.LogRecordCount())
}

func TestShutdownFlushesOpenCases(t *testing.T) {
	h := newHarness(t, nil)
	h.sendTraces(withoutRoot(testfixtures.Traces(t, testfixtures.Traceloop)))
	h.shutdown()
	cases := h.cases()
	require.Len(t, cases, 1)
	assert.Equal(t, replaycase.ClosedShutdown, cases[0].ClosedBy)
	assert.ElementsMatch(t, []string{replaycase.ReasonNoRootSpan, replaycase.ReasonShutdown}, reasonCodes(cases[0]))
}

func TestLateSpansBecomeAQuarantinedFragment(t *testing.T) {
	h := newHarness(t, nil)
	td := testfixtures.Traces(t, testfixtures.Traceloop)
	late := ptrace.NewTraces()
	chat := td.ResourceSpans().At(0).ScopeSpans().At(1)
	chat.CopyTo(late.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty())
	td.ResourceSpans().At(0).ScopeSpans().RemoveIf(func(ss ptrace.ScopeSpans) bool { return ss.Scope().Name() != "holdout-agent" })
	h.sendTraces(td)
	h.advance(3 * time.Second)
	h.sendTraces(late)
	h.advance(40 * time.Second)

	cases := h.cases()
	require.Len(t, cases, 2)
	assert.NotEqual(t, cases[0].CaseID, cases[1].CaseID)
	assert.Equal(t, cases[0].Provenance.TraceID, cases[1].Provenance.TraceID)
	assert.Contains(t, reasonCodes(cases[1]), replaycase.ReasonLateSpans)
	assert.Equal(t, int64(2), cases[1].Provenance.SpanCount)
	metadatatest.AssertEqualProcessorReplayCaseLateSpans(t, h.tel, []metricdata.DataPoint[int64]{{Value: 2}}, metricdatatest.IgnoreTimestamp())
	h.shutdown()
}

func TestSpanLimitClosesTheTraceAndKeepsTheRest(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Limits.MaxSpansPerTrace = 2 })
	td := testfixtures.Traces(t, testfixtures.Traceloop)
	for i := 0; i < td.ResourceSpans().At(0).ScopeSpans().Len(); i++ {
		one := ptrace.NewTraces()
		td.ResourceSpans().At(0).ScopeSpans().At(i).CopyTo(one.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty())
		h.sendTraces(one) // 3 spans: 2 fill the case, 1 starts a fragment; then 2: 1 fills it, 1 starts another
	}
	h.shutdown()
	cases := h.cases()
	require.Len(t, cases, 3)
	var spans int64
	ids := map[string]bool{}
	for _, c := range cases {
		spans += c.Provenance.SpanCount
		ids[c.CaseID] = true
		assert.LessOrEqual(t, c.Provenance.SpanCount, int64(2))
	}
	assert.Equal(t, int64(5), spans, "every span is in a case")
	assert.Len(t, ids, 3, "each fragment has its own case id")
	assert.Equal(t, replaycase.ClosedSpanLimit, cases[0].ClosedBy)
	assert.Contains(t, reasonCodes(cases[0]), replaycase.ReasonSpanLimit)
	assert.Contains(t, reasonCodes(cases[1]), replaycase.ReasonLateSpans)
	assert.Contains(t, reasonCodes(cases[2]), replaycase.ReasonLateSpans)
}

func TestTracesWithoutGenAIPassThroughUnchanged(t *testing.T) {
	h := newHarness(t, nil)
	td := ptrace.NewTraces()
	sp := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	sp.SetTraceID([16]byte{9})
	sp.SetSpanID([8]byte{9})
	sp.SetName("GET /healthz")
	want := ptrace.NewTraces()
	td.CopyTo(want)
	h.sendTraces(td)
	h.advance(3 * time.Second)
	require.Len(t, h.sink.AllTraces(), 1)
	assert.Equal(t, want, h.sink.AllTraces()[0])
	assert.Empty(t, h.cases())

	ld := plog.NewLogs()
	ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty().Body().SetStr("plain log")
	h.sendLogs(ld)
	assert.Equal(t, 1, h.logOut.LogRecordCount(), "logs that are not GenAI events pass on")
	h.shutdown()
}

func TestMetadataAndAssertionsComeFromOTTL(t *testing.T) {
	h := newHarness(t, func(c *Config) {
		c.Metadata = map[string]string{"service": `resource.attributes["service.name"]`, "system": `span.attributes["gen_ai.system"]`, "absent": `span.attributes["nope"]`}
		c.Assertions = map[string]string{"expected": `span.attributes["app.expected"]`}
	})
	h.sendTraces(testfixtures.Traces(t, testfixtures.OTelEvents))
	h.sendLogs(testfixtures.Logs(t, testfixtures.OTelEvents))
	h.advance(3 * time.Second)
	c := h.cases()[0]
	assert.Equal(t, map[string]string{"service": "holdout-agent-otel", "system": "openai"}, c.Metadata)
	assert.Equal(t, map[string]string{"expected": "mentions Paris weather"}, c.Assertions)
	h.shutdown()
}

// Many senders on both signals with the real sweeper running: run with -race.
func TestConcurrentTracesAndLogs(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.RootGracePeriod = 20 * time.Millisecond })
	h.p.now = time.Now
	require.NoError(t, h.traces.Start(context.Background(), componenttest.NewNopHost()))
	require.NoError(t, h.logs.Start(context.Background(), componenttest.NewNopHost()))
	const senders, perSender = 4, 25
	var wg sync.WaitGroup
	for s := 0; s < senders; s++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < perSender; i++ {
				td, ld := testfixtures.Traces(t, testfixtures.OTelEvents), testfixtures.Logs(t, testfixtures.OTelEvents)
				testfixtures.WithTraceID(td, ld, s*perSender+i)
				assert.NoError(t, h.logs.ConsumeLogs(context.Background(), ld))
				assert.NoError(t, h.traces.ConsumeTraces(context.Background(), td))
			}
		}()
	}
	wg.Wait()
	h.shutdown()
	cases := h.cases()
	require.Len(t, cases, senders*perSender)
	for _, c := range cases {
		assert.Equal(t, replaycase.StatusAccepted, c.Status, fmt.Sprint(c.Reasons))
	}
}

// The collector shuts pipelines down one component at a time: when one pipeline's face of the
// processor shuts down, the other pipeline's receiver may still deliver. Nothing may be lost.
func TestDataAfterTheFirstShutdownIsNotLost(t *testing.T) {
	h := newHarness(t, nil)
	require.NoError(t, h.logs.Shutdown(context.Background())) // flushes (nothing open yet)
	h.sendTraces(testfixtures.Traces(t, testfixtures.Traceloop))
	cases := h.cases()
	require.Len(t, cases, 1, "closed at once")
	assert.Equal(t, replaycase.ClosedShutdown, cases[0].ClosedBy)
	assert.Equal(t, replaycase.StatusAccepted, cases[0].Status)
	h.sendLogs(testfixtures.Logs(t, testfixtures.OTelEvents))
	assert.Equal(t, 8, h.logOut.LogRecordCount(), "log events pass through once buffering stopped")
	require.NoError(t, h.traces.Shutdown(context.Background()))
}
