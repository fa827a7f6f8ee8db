package replaycaseprocessor

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/reprise-dev/reprise/internal/pdatawalk"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/processor/replaycaseprocessor/internal/metadatatest"
	"github.com/reprise-dev/reprise/replaycase"
)

// Tests for issue "nothing acknowledged is lost, forged, doubled or made unreadable": each
// reproduces one of its numbered problems.

func signal(s string) attribute.Set { return attribute.NewSet(attribute.String("signal", s)) }

// forgedSpan is a span a client sends with replay.* attributes, as if it were a case span.
func forgedSpan(td ptrace.Traces, trace byte, attrs map[string]string) {
	sp := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	sp.SetTraceID(pcommon.TraceID{trace})
	sp.SetSpanID(pcommon.SpanID{trace})
	sp.SetName("GET /forged")
	for k, v := range attrs {
		sp.Attributes().PutStr(k, v)
	}
}

// Problem 1: a span with replay.* attributes must neither become a case nor poison real ones.
func TestReservedNamespaceIsStrippedFromIncomingTelemetry(t *testing.T) {
	h := newHarness(t, nil)
	real := testfixtures.Traces(t, testfixtures.OTelEvents)
	real.ResourceSpans().At(0).Resource().Attributes().PutStr("replay.status", "accepted")
	h.sendTraces(real)
	h.sendLogs(testfixtures.Logs(t, testfixtures.OTelEvents))
	forged := ptrace.NewTraces()
	forgedSpan(forged, 0xA, map[string]string{replaycase.AttrCaseID: "c0ffee"})
	forgedSpan(forged, 0xB, map[string]string{
		replaycase.AttrCaseID: "victim", replaycase.AttrSchemaVersion: replaycase.SchemaVersion,
		replaycase.AttrStatus: "accepted", replaycase.AttrClosedBy: "root_ended",
	})
	h.sendTraces(forged)
	h.advance(3 * time.Second)

	cases := h.cases()
	require.Len(t, cases, 1, "only the real run is a case")
	assert.Equal(t, replaycase.StatusAccepted, cases[0].Status, "%v", cases[0].Reasons)
	assert.NotEqual(t, "victim", cases[0].CaseID)
	var passed int
	for _, td := range h.sink.AllTraces() {
		forEachScopeSpans(td, func(ss ptrace.ScopeSpans) {
			for i := 0; i < ss.Spans().Len(); i++ {
				sp := ss.Spans().At(i)
				if sp.Name() == "GET /forged" {
					passed++
					assert.Zero(t, sp.Attributes().Len(), "pass-through spans carry no replay.* out")
				}
			}
		})
	}
	assert.Equal(t, 2, passed, "the forged spans pass through as ordinary spans")
	metadatatest.AssertEqualProcessorReplayCaseReservedAttributes(t, h.tel, []metricdata.DataPoint[int64]{
		{Value: 6, Attributes: signal("traces")},
	}, metricdatatest.IgnoreTimestamp())
	h.shutdown()
}

func TestReservedNamespaceIsStrippedFromLogs(t *testing.T) {
	h := newHarness(t, nil)
	ld := plog.NewLogs()
	lr := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	lr.Attributes().PutStr("replay.case_id", "x")
	lr.Attributes().PutEmptyMap("nested").PutStr("replay.status", "accepted")
	lr.Body().SetStr("plain log")
	h.sendLogs(ld)
	out := h.logOut.AllLogs()[0].ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0)
	_, has := out.Attributes().Get("replay.case_id")
	assert.False(t, has)
	nested, _ := out.Attributes().Get("nested")
	assert.Zero(t, nested.Map().Len())
	h.shutdown()
}

// A client cannot mark its run as sent again after a crash (replay.case.resent): the exporter
// would leave the case out as a copy it already wrote. The mark is removed on intake, at every
// level, and counted; the case is not marked, so it is written.
func TestAClientCannotMarkItsRunResent(t *testing.T) {
	h := newHarness(t, nil)
	td := testfixtures.Traces(t, testfixtures.OTelEvents)
	marks := 1 // the resource's
	td.ResourceSpans().At(0).Resource().Attributes().PutBool(replaycase.AttrResent, true)
	forEachScopeSpans(td, func(ss ptrace.ScopeSpans) {
		ss.Scope().Attributes().PutBool(replaycase.AttrResent, true)
		for i := 0; i < ss.Spans().Len(); i++ {
			ss.Spans().At(i).Attributes().PutBool(replaycase.AttrResent, true)
		}
		marks += 1 + ss.Spans().Len()
	})
	ld := testfixtures.Logs(t, testfixtures.OTelEvents)
	records := ld.LogRecordCount()
	for r := range pdatawalk.LogRecords(ld) {
		r.Record.Attributes().PutBool(replaycase.AttrResent, true)
	}
	h.sendTraces(td)
	h.sendLogs(ld)
	h.advance(3 * time.Second)

	cases := h.cases()
	require.Len(t, cases, 1)
	assert.False(t, cases[0].Resent, "only the processor marks a case sent again")
	metadatatest.AssertEqualProcessorReplayCaseReservedAttributes(t, h.tel, []metricdata.DataPoint[int64]{
		{Value: int64(marks), Attributes: signal("traces")},
		{Value: int64(records), Attributes: signal("logs")},
	}, metricdatatest.IgnoreTimestamp())
	h.shutdown()
}

// A trusted tier (trusted_upstream) may send case spans: they pass through as they are.
func TestTrustedUpstreamPassesCaseSpansThrough(t *testing.T) {
	src := newHarness(t, nil)
	src.sendTraces(testfixtures.Traces(t, testfixtures.OTelEvents))
	src.sendLogs(testfixtures.Logs(t, testfixtures.OTelEvents))
	src.advance(3 * time.Second)
	require.Len(t, src.sink.AllTraces(), 1)
	caseSpans := src.sink.AllTraces()[0]
	src.shutdown()

	h := newHarness(t, func(c *Config) { c.TrustedUpstream = true })
	want := ptrace.NewTraces()
	caseSpans.CopyTo(want)
	h.sendTraces(caseSpans)
	require.Len(t, h.sink.AllTraces(), 1, "passed on at once, not buffered")
	assert.Equal(t, want, h.sink.AllTraces()[0])
	h.shutdown()
	assert.Len(t, h.sink.AllTraces(), 1, "nothing else was buffered")
}

// Problem 5: the same spans and events delivered twice (a client retry) count once.
func TestDuplicateDeliveryCountsOnce(t *testing.T) {
	h := newHarness(t, nil)
	for i := 0; i < 2; i++ {
		h.sendTraces(testfixtures.Traces(t, testfixtures.OTelEvents))
		h.sendLogs(testfixtures.Logs(t, testfixtures.OTelEvents))
	}
	h.advance(3 * time.Second)
	cases := h.cases()
	require.Len(t, cases, 1)
	assert.Len(t, cases[0].Steps, 4)
	assert.Equal(t, int64(214), cases[0].Usage.TotalTokens)
	assert.Equal(t, int64(5), cases[0].Provenance.SpanCount)
	assert.Equal(t, int64(8), cases[0].Provenance.EventCount)
	metadatatest.AssertEqualProcessorReplayCaseDuplicates(t, h.tel, []metricdata.DataPoint[int64]{
		{Value: 5, Attributes: signal("traces")}, {Value: 8, Attributes: signal("logs")},
	}, metricdatatest.IgnoreTimestamp())
	h.shutdown()
}

// Problem 5, second half: delivered again after its case closed, a run becomes a fragment with
// a case id of its own, never the closed case's.
func TestRedeliveryAfterCloseNeverReusesTheCaseID(t *testing.T) {
	h := newHarness(t, nil)
	h.sendTraces(testfixtures.Traces(t, testfixtures.Traceloop))
	h.advance(3 * time.Second)
	// Sent again with a span not sent before: the others are duplicates (closed_spans.go).
	h.sendTraces(withNewSpanID(testfixtures.Traces(t, testfixtures.Traceloop)))
	h.advance(time.Hour)
	cases := h.cases()
	require.Len(t, cases, 2)
	assert.NotEqual(t, cases[0].CaseID, cases[1].CaseID)
	assert.Equal(t, replaycase.StatusAccepted, cases[0].Status)
	assert.True(t, cases[1].HasReason(replaycase.ReasonLateSpans))
	h.shutdown()
}

// Problem 6: invalid UTF-8 anywhere is repaired and the case says so.
func TestInvalidUTF8IsRepairedAndFlagged(t *testing.T) {
	h := newHarness(t, nil)
	td := testfixtures.Traces(t, testfixtures.Traceloop)
	sp := td.ResourceSpans().At(0).ScopeSpans().At(1).Spans().At(0)
	sp.Attributes().PutStr("gen_ai.prompt.0.content", "caf\xe9 \xff")
	sp.Attributes().PutStr("bad\xc3key", "v")
	td.ResourceSpans().At(0).Resource().Attributes().PutStr("service.instance.id", "\xfe")
	h.sendTraces(td)
	h.advance(3 * time.Second)
	cases := h.cases()
	require.Len(t, cases, 1)
	require.True(t, cases[0].HasReason(replaycase.ReasonInvalidUTF8), "%v", cases[0].Reasons)
	for _, out := range h.sink.AllTraces() {
		body, err := (&ptrace.JSONMarshaler{}).MarshalTraces(out)
		require.NoError(t, err)
		assert.True(t, utf8.Valid(body))
	}
	raw, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(cases[0].RawSpans)
	require.NoError(t, err)
	prompt, ok := raw.ResourceSpans().At(0).ScopeSpans().At(1).Spans().At(0).Attributes().Get("gen_ai.prompt.0.content")
	require.True(t, ok)
	assert.Equal(t, "caf\uFFFD \uFFFD", prompt.Str(), "the kept raw spans are repaired too")
	// The planted prompt also disagrees with the span's gen_ai.input.messages (conflicting_conventions).
	for _, r := range cases[0].Reasons {
		if r.Code == replaycase.ReasonInvalidUTF8 {
			assert.Contains(t, r.Detail, "3 strings")
		}
	}
	metadatatest.AssertEqualProcessorReplayCaseInvalidUtf8(t, h.tel, []metricdata.DataPoint[int64]{
		{Value: 3, Attributes: signal("traces")},
	}, metricdatatest.IgnoreTimestamp())
	h.shutdown()
}

// Problem 7: spans without a trace id are one case per request with their own reason.
func TestZeroTraceIDGivesOneQuarantinedCasePerRequest(t *testing.T) {
	h := newHarness(t, nil)
	for run := 0; run < 2; run++ {
		td := testfixtures.Traces(t, testfixtures.Traceloop)
		forEachScopeSpans(td, func(ss ptrace.ScopeSpans) {
			for i := 0; i < ss.Spans().Len(); i++ {
				ss.Spans().At(i).SetTraceID(pcommon.TraceID{})
				id := ss.Spans().At(i).SpanID()
				id[7] ^= byte(run) // a second run: other span ids
				ss.Spans().At(i).SetSpanID(id)
				if !ss.Spans().At(i).ParentSpanID().IsEmpty() {
					pid := ss.Spans().At(i).ParentSpanID()
					pid[7] ^= byte(run)
					ss.Spans().At(i).SetParentSpanID(pid)
				}
			}
		})
		h.sendTraces(td)
	}
	h.advance(time.Millisecond) // closed at once; sent at the next sweep
	cases := h.cases()
	require.Len(t, cases, 2, "one per request")
	assert.NotEqual(t, cases[0].CaseID, cases[1].CaseID)
	for _, c := range cases {
		assert.Equal(t, replaycase.StatusQuarantined, c.Status)
		assert.True(t, c.HasReason(replaycase.ReasonInvalidTraceID))
		assert.Empty(t, c.Provenance.TraceID, "encoded as the all-zero id, which reads back as no trace id")
		assert.Equal(t, replaycase.ClosedInvalidTraceID, c.ClosedBy)
		assert.Len(t, c.Steps, 4)
	}
	h.shutdown()
}

// Spans without a trace id and with the same span ids (an SDK that writes zero ids writes the
// same span ids too) but different contents are two cases with two case ids; the same request
// sent again keeps its case id.
func TestZeroTraceIDRunsWithTheSameSpanIDsKeepTheirOwnCaseIDs(t *testing.T) {
	h := newHarness(t, nil)
	request := func(question string) ptrace.Traces {
		td := testfixtures.Traces(t, testfixtures.Traceloop)
		forEachScopeSpans(td, func(ss ptrace.ScopeSpans) {
			for i := 0; i < ss.Spans().Len(); i++ {
				ss.Spans().At(i).SetTraceID(pcommon.TraceID{})
				ss.Spans().At(i).Attributes().PutStr("app.question", question)
			}
		})
		return td
	}
	h.sendTraces(request("paris"))
	h.sendTraces(request("rome"))
	h.advance(time.Millisecond)
	cases := h.cases()
	require.Len(t, cases, 2)
	assert.NotEqual(t, cases[0].CaseID, cases[1].CaseID, "different requests, different ids")
	h.sink.Reset()
	h.sendTraces(request("paris"))
	h.advance(time.Millisecond)
	again := h.cases()
	require.Len(t, again, 1)
	assert.Equal(t, cases[0].CaseID, again[0].CaseID, "the same request again, the same id")
	h.shutdown()
}

// manySpans is one trace of n child spans under the fixture's root run.
func manySpans(t *testing.T, n int) ptrace.Traces {
	td := testfixtures.Traces(t, testfixtures.Traceloop)
	ss := td.ResourceSpans().At(0).ScopeSpans().At(1)
	tmpl := ss.Spans().At(0)
	extra := n - td.SpanCount()
	for i := 0; i < extra; i++ {
		sp := ss.Spans().AppendEmpty()
		tmpl.CopyTo(sp)
		sp.SetSpanID(pcommon.SpanID{0xEE, byte(i >> 16), byte(i >> 8), byte(i)})
	}
	return td
}

// Problem 8: spans past max_spans_per_trace form fragments; none vanish.
func TestOversizedTraceFormsFragmentsWithEverySpan(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Limits.MaxSpansPerTrace = 100 })
	h.sendTraces(manySpans(t, 1000))
	h.shutdown()
	cases := h.cases()
	require.Len(t, cases, 10)
	var spans int64
	ids := map[string]bool{}
	for i, c := range cases {
		spans += c.Provenance.SpanCount
		ids[c.CaseID] = true
		assert.Equal(t, replaycase.StatusQuarantined, c.Status)
		if i > 0 {
			assert.True(t, c.HasReason(replaycase.ReasonLateSpans))
		}
	}
	assert.Equal(t, int64(1000), spans)
	assert.Len(t, ids, 10)
}

// Problem 8, second half: log events cannot push the run's spans out.
func TestLogEventsHaveTheirOwnLimit(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Limits.MaxSpansPerTrace, c.Limits.MaxEventsPerTrace = 10, 6 })
	ld := testfixtures.Logs(t, testfixtures.OTelEvents)
	extra := plog.NewLogs()
	ld.CopyTo(extra)
	ts := pcommon.Timestamp(0)
	for r := range pdatawalk.LogRecords(extra) {
		ts++
		r.Record.SetTimestamp(ts) // other events, not retries
	}
	h.sendLogs(ld)
	h.sendLogs(extra)
	h.sendTraces(testfixtures.Traces(t, testfixtures.OTelEvents))
	h.advance(3 * time.Second)
	cases := h.cases()
	require.Len(t, cases, 1, "no late_spans fragment")
	assert.Equal(t, int64(5), cases[0].Provenance.SpanCount)
	assert.Equal(t, int64(6), cases[0].Provenance.EventCount)
	assert.True(t, cases[0].HasReason(replaycase.ReasonEventLimit))
	assert.False(t, cases[0].HasReason(replaycase.ReasonLateSpans))
	metadatatest.AssertEqualProcessorReplayCaseDroppedEvents(t, h.tel, []metricdata.DataPoint[int64]{
		{Value: 10, Attributes: attribute.NewSet(attribute.String("reason", "max_events_per_trace"))},
	}, metricdatatest.IgnoreTimestamp())
	h.shutdown()
}

// switchable is a next consumer that refuses (retryably) while closed is set.
type switchable struct {
	consumer.Traces
	mu     sync.Mutex
	refuse error
}

func (s *switchable) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	s.mu.Lock()
	err := s.refuse
	s.mu.Unlock()
	if err != nil {
		return err
	}
	return s.Traces.ConsumeTraces(ctx, td)
}

func (s *switchable) set(err error) {
	s.mu.Lock()
	s.refuse = err
	s.mu.Unlock()
}

// Problem 2: when the next consumer is full, closed cases are kept and new data is refused
// with a retryable error; the caller whose data was buffered gets no error.
func TestBackpressureKeepsClosedCasesAndRefusesNewData(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Limits.MaxOpenTraces, c.EmitBatchSize = 1, 1 })
	next := &switchable{Traces: h.sink}
	h.p.nextTraces = next
	run := func(i int) ptrace.Traces {
		td := testfixtures.Traces(t, testfixtures.Traceloop)
		testfixtures.WithTraceID(td, plog.NewLogs(), i)
		return td
	}
	next.set(errors.New("sending queue is full"))
	require.NoError(t, h.traces.ConsumeTraces(context.Background(), run(0)))
	require.NoError(t, h.traces.ConsumeTraces(context.Background(), run(1)), "run 1 was buffered: evicting run 0 is not its error")
	err := h.traces.ConsumeTraces(context.Background(), run(2))
	require.ErrorIs(t, err, errBackpressure, "new data is refused while run 0 waits")
	assert.False(t, consumererror.IsPermanent(err), "the receiver answers 503 and the client retries")
	assert.Len(t, h.p.open, 1, "run 2 was not taken")
	metadatatest.AssertEqualProcessorReplayCaseRefused(t, h.tel, []metricdata.DataPoint[int64]{
		{Value: 5, Attributes: signal("traces")},
	}, metricdatatest.IgnoreTimestamp())

	next.set(nil)
	require.NoError(t, h.traces.ConsumeTraces(context.Background(), run(2)), "the retry is taken once the backlog is sent")
	h.shutdown()
	cases := h.cases()
	require.Len(t, cases, 3, "every run exactly once")
	seen := map[string]bool{}
	for _, c := range cases {
		seen[c.Provenance.TraceID] = true
	}
	assert.Len(t, seen, 3)
	metadatatest.AssertEqualProcessorReplayCaseEmitFailures(t, h.tel, []metricdata.DataPoint[int64]{{Value: 1}}, metricdatatest.IgnoreTimestamp())
}

// A permanent refusal cannot be helped by retrying: the cases are dropped, counted by reason and
// each logged with its id on the unsampled drop logger.
func TestPermanentRefusalIsCountedAndLoggedPerCase(t *testing.T) {
	h := newHarness(t, nil)
	logs := h.observeDropLog()
	h.p.nextTraces = &switchable{Traces: h.sink, refuse: consumererror.NewPermanent(errors.New("bad data"))}
	for i := 0; i < 20; i++ {
		td := testfixtures.Traces(t, testfixtures.Traceloop)
		testfixtures.WithTraceID(td, plog.NewLogs(), i)
		h.sendTraces(td)
	}
	h.advance(3 * time.Second)
	dropped := logs.FilterMessage("replay case dropped").All()
	require.Len(t, dropped, 20, "one line per case, none sampled away")
	assert.Equal(t, "permanent_downstream_error", dropped[0].ContextMap()["reason"])
	assert.NotEmpty(t, dropped[0].ContextMap()["case_id"])
	metadatatest.AssertEqualProcessorReplayCaseDroppedCases(t, h.tel, []metricdata.DataPoint[int64]{
		{Value: 20, Attributes: attribute.NewSet(attribute.String("reason", "permanent_downstream_error"))},
	}, metricdatatest.IgnoreTimestamp())
	h.shutdown()
}

// A run that is no case (here, no GenAI telemetry) and is refused for good with the cases of
// its batch is counted and logged with its trace id too, and so are its log events when the
// next logs consumer refuses them for good: nothing leaves the processor unseen.
func TestPermanentRefusalOfPassThroughRunsIsCountedAndLogged(t *testing.T) {
	h := newHarness(t, nil)
	logs := h.observeDropLog()
	h.p.nextTraces = &switchable{Traces: h.sink, refuse: consumererror.NewPermanent(errors.New("bad data"))}
	td := ptrace.NewTraces()
	sp := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	sp.SetTraceID([16]byte{9})
	sp.SetSpanID([8]byte{9})
	sp.SetName("GET /healthz")
	h.sendTraces(td)
	h.advance(3 * time.Second)
	dropped := logs.FilterMessage("run passed on unchanged dropped").All()
	require.Len(t, dropped, 1)
	assert.Equal(t, "09000000000000000000000000000000", dropped[0].ContextMap()["trace_id"])
	assert.Equal(t, "permanent_downstream_error", dropped[0].ContextMap()["reason"])
	metadatatest.AssertEqualProcessorReplayCaseDroppedPassthroughTraces(t, h.tel, []metricdata.DataPoint[int64]{
		{Value: 1, Attributes: attribute.NewSet(attribute.String("reason", "permanent_downstream_error"))},
	}, metricdatatest.IgnoreTimestamp())
	h.shutdown()
}

func TestPermanentRefusalOfPassedEventsIsCountedAndLogged(t *testing.T) {
	h := newHarness(t, nil)
	logs := h.observeDropLog()
	h.p.nextLogs = refusingLogs{consumererror.NewPermanent(errors.New("bad data"))}
	// GenAI events without their spans are no case: they go on to the logs pipeline.
	ld := testfixtures.Logs(t, testfixtures.OTelEvents)
	events := ld.LogRecordCount()
	require.NoError(t, h.p.ConsumeLogs(context.Background(), ld))
	h.advance(40 * time.Second)
	dropped := logs.FilterMessage("log events of runs passed on unchanged dropped").All()
	require.Len(t, dropped, 1)
	assert.EqualValues(t, events, dropped[0].ContextMap()["events"])
	assert.NotEmpty(t, dropped[0].ContextMap()["trace_ids"])
	metadatatest.AssertEqualProcessorReplayCaseDroppedEvents(t, h.tel, []metricdata.DataPoint[int64]{
		{Value: int64(events), Attributes: attribute.NewSet(attribute.String("reason", "permanent_downstream_error"))},
	}, metricdatatest.IgnoreTimestamp())
	h.shutdown()
}

// refusingLogs is a next logs consumer that refuses everything with err.
type refusingLogs struct{ err error }

func (refusingLogs) Capabilities() consumer.Capabilities { return consumer.Capabilities{} }

func (r refusingLogs) ConsumeLogs(context.Context, plog.Logs) error { return r.err }

// At shutdown a refusing next consumer is retried for a while; what still cannot be sent (and
// has no storage to wait in) is dropped, counted and logged, and Shutdown reports it.
func TestShutdownReportsCasesItCouldNotDeliver(t *testing.T) {
	h := newHarness(t, nil)
	h.p.flushRetry = 100 * time.Millisecond
	logs := h.observeDropLog()
	h.p.nextTraces = &switchable{Traces: h.sink, refuse: errors.New("exporter queue full")}
	h.sendTraces(testfixtures.Traces(t, testfixtures.Traceloop))
	err := h.traces.Shutdown(context.Background())
	assert.ErrorContains(t, err, "exporter queue full")
	require.NoError(t, h.logs.Shutdown(context.Background()))
	assert.Len(t, logs.FilterMessage("replay case dropped").All(), 1)
	metadatatest.AssertEqualProcessorReplayCaseDroppedCases(t, h.tel, []metricdata.DataPoint[int64]{
		{Value: 1, Attributes: attribute.NewSet(attribute.String("reason", "undeliverable_at_shutdown"))},
	}, metricdatatest.IgnoreTimestamp())
}

// At shutdown, a batch whose spans the next traces consumer took, and whose log events (of a
// run passed on unchanged) the next logs consumer still refuses: its case is a row, so it is
// neither counted nor logged as dropped; what is lost are the events, counted and logged as
// such (before, the case was counted in dropped_cases as well as taken).
func TestShutdownCountsOnlyTheEventsLeftOfABatchWhoseSpansWereTaken(t *testing.T) {
	h := newHarness(t, nil)
	h.p.flushRetry = 100 * time.Millisecond
	logs := h.observeDropLog()
	h.p.nextLogs = refusingLogs{errors.New("logs exporter queue full")}
	h.sendTraces(testfixtures.Traces(t, testfixtures.Traceloop))
	ld := testfixtures.Logs(t, testfixtures.OTelEvents) // GenAI events without their spans: passed on
	events := ld.LogRecordCount()
	h.sendLogs(ld)
	assert.ErrorContains(t, h.traces.Shutdown(context.Background()), "logs exporter queue full")
	require.NoError(t, h.logs.Shutdown(context.Background()))

	require.Len(t, h.cases(), 1, "the case was taken")
	assert.Empty(t, logs.FilterMessage("replay case dropped").All(), "a case taken is not dropped")
	assert.Len(t, logs.FilterMessage("log events of runs passed on unchanged dropped").All(), 1)
	metadatatest.AssertEqualProcessorReplayCaseDroppedEvents(t, h.tel, []metricdata.DataPoint[int64]{
		{Value: int64(events), Attributes: attribute.NewSet(attribute.String("reason", "undeliverable_at_shutdown"))},
	}, metricdatatest.IgnoreTimestamp())
}

// Problem 3: the byte limit bounds the heap held, and holds while the next consumer refuses.
func TestMemoryHeldStaysUnderTheByteLimitUnderOverload(t *testing.T) {
	const limit = 200_000
	h := newHarness(t, func(c *Config) { c.Limits.MaxBufferedBytes = limit })
	next := &switchable{Traces: h.sink}
	h.p.nextTraces = next
	next.set(errors.New("sending queue is full"))
	var refused int
	for i := 0; i < 200; i++ {
		td, ld := testfixtures.Traces(t, testfixtures.OTelEvents), testfixtures.Logs(t, testfixtures.OTelEvents)
		testfixtures.WithTraceID(td, ld, i)
		if err := h.logs.ConsumeLogs(context.Background(), ld); err != nil {
			refused++
			continue
		}
		if err := h.traces.ConsumeTraces(context.Background(), td); err != nil {
			refused++
		}
		h.p.mu.Lock()
		held := h.p.bytes
		h.p.mu.Unlock()
		// Admission stops at the limit (one request may cross it); a batch being built stops at
		// the limit plus its headroom (one case may cross that), whichever is higher.
		oneRun := memTraces(testfixtures.Traces(t, testfixtures.OTelEvents)) + memLogs(testfixtures.Logs(t, testfixtures.OTelEvents))
		assert.LessOrEqual(t, held, int64(limit+limit/buildHeadroom)+oneRun, "at most the build headroom and one run over the limit")
	}
	assert.Positive(t, refused, "the overload was refused at the door")
	next.set(nil)
	h.shutdown()
	h.p.mu.Lock()
	assert.Zero(t, h.p.bytes, "everything sent, nothing left accounted")
	h.p.mu.Unlock()
}

// The last fragment of a trace cut at the span limit closes after the root grace period, not
// after idle_timeout: its trace's root has arrived.
func TestFragmentAfterTheSpanLimitClosesAfterTheGracePeriod(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Limits.MaxSpansPerTrace = 100 })
	h.sendTraces(manySpans(t, 250))
	h.advance(3 * time.Second)
	cases := h.cases()
	require.Len(t, cases, 3)
	assert.Equal(t, replaycase.ClosedRootEnded, cases[2].ClosedBy)
	h.shutdown()
}

// Memory at the byte limit (where an overload keeps it) does not split the cases closed
// together into batches of one: decoding a batch may take the build headroom, so they are still
// sent in batches of emit_batch_size, not one request and one exporter write per case. As in
// production, a batch is small next to the limit (256 runs of a few kB against 128 MiB).
func TestCasesClosedAtTheByteLimitAreSentInWholeBatches(t *testing.T) {
	const runs = 300
	h := newHarness(t, func(c *Config) { c.EmitBatchSize = 16 })
	for i := 0; i < runs; i++ {
		td, ld := testfixtures.Traces(t, testfixtures.OTelEvents), testfixtures.Logs(t, testfixtures.OTelEvents)
		testfixtures.WithTraceID(td, ld, i)
		h.sendLogs(ld)
		h.sendTraces(td)
	}
	require.Empty(t, h.sink.AllTraces(), "every run is still open")
	h.p.mu.Lock()
	h.p.cfg.Limits.MaxBufferedBytes = h.p.bytes // the open runs fill the limit exactly
	h.p.mu.Unlock()
	h.advance(h.p.cfg.RootGracePeriod)
	batches := h.sink.AllTraces()
	wantBatches := (runs + h.p.cfg.EmitBatchSize - 1) / h.p.cfg.EmitBatchSize
	assert.Len(t, batches, wantBatches, "the closed cases went out in batches of emit_batch_size")
	assert.Len(t, h.cases(), runs)
	h.shutdown()
}

// A next consumer that blocks (an exporter queue that blocks when full) does not hold Shutdown
// past its deadline: the sweep's send ends when Shutdown begins, and the batch is flushed (or
// reported) within Shutdown's own context.
func TestShutdownIsNotHeldByABlockedNextConsumer(t *testing.T) {
	h := newHarness(t, nil)
	called := make(chan struct{}, 1)
	h.p.nextTraces = blockingTraces{called}
	h.sendTraces(testfixtures.Traces(t, testfixtures.Traceloop))
	h.clock = h.clock.Add(time.Minute) // before Start: the sweeper reads the clock
	require.NoError(t, h.p.Start(context.Background(), nil))
	select {
	case <-called:
	case <-time.After(10 * time.Second):
		t.Fatal("the sweeper never sent the closed case")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	returned := make(chan error, 1)
	go func() { returned <- h.p.Shutdown(ctx) }()
	select {
	case err := <-returned:
		require.Error(t, err, "the case could not be delivered: Shutdown says so")
	case <-time.After(10 * time.Second):
		t.Fatal("Shutdown is still waiting for the blocked next consumer")
	}
}

// blockingTraces is a next consumer that blocks until the caller's context ends.
type blockingTraces struct{ called chan struct{} }

func (blockingTraces) Capabilities() consumer.Capabilities { return consumer.Capabilities{} }

func (b blockingTraces) ConsumeTraces(ctx context.Context, _ ptrace.Traces) error {
	select {
	case b.called <- struct{}{}:
	default:
	}
	<-ctx.Done()
	return ctx.Err()
}

// The line of a case dropped because the next consumer refused it (for good, alone or in its
// batch, or still at shutdown without storage) names its run's trace id beside the case id: the
// case was never written, so its case_id is found nowhere, and the trace id is what finds the run
// in the agent's own traces. Before, the line held the case id only, and a run whose case was
// dropped at shutdown could not be told from one lost (FuzzEveryRunEndsInOnePlace, input
// 14c88a11836e8c36).
func TestADroppedCaseIsLoggedWithItsTraceID(t *testing.T) {
	for _, tc := range []struct {
		name   string
		refuse error
		runs   int
		reason string
	}{
		{"refused for good", consumererror.NewPermanent(errors.New("bad data")), 1, "permanent_downstream_error"},
		{"refused for good, one at a time", consumererror.NewPermanent(errors.New("bad data")), 3, "permanent_downstream_error"},
		{"still refused at shutdown", errors.New("exporter queue full"), 2, "undeliverable_at_shutdown"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, nil)
			h.p.flushRetry = 0
			logs := h.observeDropLog()
			h.p.nextTraces = &switchable{Traces: h.sink, refuse: tc.refuse}
			want := map[string]bool{}
			for i := range tc.runs {
				td := testfixtures.Traces(t, testfixtures.Traceloop)
				testfixtures.WithTraceID(td, plog.NewLogs(), i)
				want[td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).TraceID().String()] = true
				h.sendTraces(td)
			}
			h.clock = h.clock.Add(3 * time.Second)
			_ = h.p.sweep(context.Background())
			_ = h.traces.Shutdown(context.Background())
			dropped := logs.FilterMessage("replay case dropped").All()
			require.Len(t, dropped, tc.runs)
			got := map[string]bool{}
			for _, e := range dropped {
				assert.Equal(t, tc.reason, e.ContextMap()["reason"])
				assert.NotEmpty(t, e.ContextMap()["case_id"])
				trace, _ := e.ContextMap()["trace_id"].(string)
				got[trace] = true
			}
			assert.Equal(t, want, got, "each line names its run's trace id")
		})
	}
}
