package replayparquetexporter

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/exporter/replayparquetexporter/internal/metadatatest"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/internal/testpipeline"
	"github.com/reprise-dev/reprise/replaycase"
)

// caseSpans returns the canonical spans the replay_case processor emits for the fixture runs,
// as one batch, and the cases they encode.
func caseSpans(t testing.TB, runs ...string) (ptrace.Traces, []*replaycase.Case) {
	sink := new(consumertest.TracesSink)
	cases := testpipeline.Run(t, sink, runs...)
	td := ptrace.NewTraces()
	for _, part := range sink.AllTraces() {
		part.ResourceSpans().MoveAndAppendTo(td.ResourceSpans())
	}
	return td, cases
}

// observed is an exporter with its telemetry and logs under test.
type observed struct {
	exporter.Traces
	tel  *componenttest.Telemetry
	logs *observer.ObservedLogs
}

// newObserved starts an exporter whose drop logger writes into the same observer as its logger.
func newObserved(t *testing.T, cfg *Config, opts ...dataset.Option) observed {
	set, tel, logs := observedSettings(t)
	return observed{Traces: startWithDropLog(t, set, set.Logger, cfg, opts...), tel: tel, logs: logs}
}

// startWithDropLog builds the exporter as the factory does (newTraces) but with dropLog as its
// logger of drops instead of droplog.New's, and starts it.
func startWithDropLog(t *testing.T, set exporter.Settings, dropLog *zap.Logger, cfg *Config, opts ...dataset.Option) exporter.Traces {
	t.Helper()
	e, err := newParquetExporter(set, cfg)
	require.NoError(t, err)
	e.dropLog, e.writerOptions = dropLog, opts
	exp, err := e.traces(context.Background(), set)
	require.NoError(t, err)
	require.NoError(t, exp.Start(context.Background(), componenttest.NewNopHost()))
	return exp
}

// observedSettings are exporter settings whose telemetry and logs a test reads.
func observedSettings(t *testing.T) (exporter.Settings, *componenttest.Telemetry, *observer.ObservedLogs) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	core, logs := observer.New(zap.DebugLevel)
	set := metadatatest.NewSettings(tel)
	set.Logger = zap.New(core)
	return set, tel, logs
}

func appendSpan(td ptrace.Traces, traceID byte, spanID byte, attrs map[string]any) {
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "mallory")
	sp := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	if traceID != 0 {
		sp.SetTraceID(pcommon.TraceID{traceID, 1})
	}
	if spanID != 0 {
		sp.SetSpanID(pcommon.SpanID{spanID, 2})
	}
	_ = sp.Attributes().FromRaw(attrs)
}

// One span with only replay.case_id set, sent in the same batch as real cases, used to make the
// exporter reject the whole batch as a permanent error: every real case of the batch was lost.
func TestOneUndecodableSpanCostsOnlyItsOwnCase(t *testing.T) {
	td, cases := caseSpans(t, testfixtures.OTelEvents, testfixtures.Traceloop, testfixtures.OTelNoContent)
	require.Len(t, cases, 3)
	shadowed := cases[0].CaseID
	appendSpan(td, 7, 1, map[string]any{replaycase.AttrCaseID: shadowed})                                     // a case id and nothing else
	appendSpan(td, 8, 2, map[string]any{replaycase.AttrCaseID: "forged", replaycase.AttrStepIndex: "abc"})    // garbage replay.* values
	appendSpan(td, 9, 3, map[string]any{replaycase.AttrCaseID: int64(42), replaycase.AttrStatus: "accepted"}) // an id that is not a string
	appendSpan(td, 0, 0, map[string]any{replaycase.AttrStatus: "accepted"})                                   // no id of any kind
	appendSpan(td, 10, 4, map[string]any{"gen_ai.operation.name": "chat"})                                    // not a case span

	cfg := testConfig(t)
	exp := newObserved(t, cfg)
	require.NoError(t, exp.ConsumeTraces(context.Background(), td), "the batch is not failed")
	require.NoError(t, exp.Shutdown(context.Background()))

	accepted := readAll[replaycase.Case](t, cfg.Directory, dataset.Cases)
	assert.Len(t, accepted, 2, "the real accepted cases are written")
	quarantined := readAll[replaycase.Case](t, cfg.Directory, dataset.Quarantine)
	require.Len(t, quarantined, 4, "the real quarantined case and one row per undecodable case")
	assert.Len(t, readAll[dataset.StepRow](t, cfg.Directory, dataset.Steps), 8)

	var isolated []replaycase.Case
	for _, c := range quarantined {
		if c.HasReason(reasonUndecodable) {
			isolated = append(isolated, c)
		}
	}
	require.Len(t, isolated, 3)
	ids := map[string]bool{}
	for _, c := range isolated {
		ids[c.CaseID] = true
		assert.NotEqual(t, shadowed, c.CaseID, "a sender cannot shadow a real case")
		assert.NotEqual(t, "forged", c.CaseID)
		assert.Equal(t, replaycase.StatusQuarantined, c.Status)
		assert.Equal(t, "mallory", c.Provenance.ServiceName)
		assert.EqualValues(t, 1, c.Provenance.SpanCount)
		raw, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(c.RawSpans)
		require.NoError(t, err)
		assert.Equal(t, 1, raw.SpanCount(), "the spans are kept for a re-drive")
	}
	assert.Len(t, ids, 3)
	for _, c := range accepted {
		assert.False(t, ids[c.CaseID])
	}

	metadatatest.AssertEqualExporterReplayParquetCasesIsolated(t, exp.tel, []metricdata.DataPoint[int64]{{Value: 3}}, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
	metadatatest.AssertEqualExporterReplayParquetSpansDropped(t, exp.tel, []metricdata.DataPoint[int64]{{Value: 1}}, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
	metadatatest.AssertEqualExporterReplayParquetSpansIgnored(t, exp.tel, []metricdata.DataPoint[int64]{{Value: 1}}, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
	assert.Equal(t, 1, exp.logs.FilterMessageSnippet("case spans dropped").FilterLevelExact(zap.ErrorLevel).Len())
	assert.Equal(t, 3, exp.logs.FilterMessageSnippet("could not be decoded").Len())
}
