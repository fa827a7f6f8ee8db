package e2e

import (
	"fmt"
	"path/filepath"
	"reflect"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/reprise-dev/reprise/internal/testcollector"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/replaycase"
)

// launchToParquet runs the collector with an OTLP/HTTP receiver, replay_case configured by the
// given YAML flow mapping, and a replay_parquet exporter writing under dir/data.
func launchToParquet(t *testing.T, dir, processor string) *collector {
	otlpPort := testcollector.FreePort(t)
	return launch(t, fmt.Sprintf(`
receivers: {otlp: {protocols: {http: {endpoint: "127.0.0.1:%d"}}}}
processors: {replay_case: %s}
exporters:
  replay_parquet: {directory: %s/data, sending_queue: {batch: {flush_timeout: 100ms}}}
service:
  telemetry: {metrics: {level: none}}
  pipelines: {traces: {receivers: [otlp], processors: [replay_case], exporters: [replay_parquet]}}
`, otlpPort, processor, dir), otlpPort)
}

// postProto sends td as one OTLP/HTTP protobuf request and requires a 200.
func postProto(t *testing.T, otlp string, td ptrace.Traces) {
	body, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	require.NoError(t, err)
	postOTLP(t, otlp, "traces", body)
}

// Problems 1, 5 and 6 through the real collector and the Parquet exporter: ten runs, a span that
// pretends to be a case (replay.case_id only), one with a full set of replay.* fields naming an
// existing case, a retry of one run, and a run with invalid UTF-8, all over OTLP/HTTP protobuf.
// Every real run is one row, nothing is forged, every string in the dataset is valid UTF-8.
func TestHostileInputNeverForgesDoublesOrBreaksTheDataset(t *testing.T) {
	dir := t.TempDir()
	c := launchToParquet(t, dir, "{root_grace_period: 200ms}")
	post := func(td ptrace.Traces) { postProto(t, c.otlp, td) }
	sent := map[string]bool{}
	var victim string
	for i := 0; i < 10; i++ {
		td := testfixtures.Traces(t, testfixtures.Traceloop)
		testfixtures.WithTraceID(td, plog.NewLogs(), i)
		sent[td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).TraceID().String()] = true
		if i == 3 {
			retry := ptrace.NewTraces()
			td.CopyTo(retry)
			post(retry) // the same spans twice: one case
		}
		if i == 9 {
			sp := td.ResourceSpans().At(0).ScopeSpans().At(1).Spans().At(0)
			sp.Attributes().PutStr("gen_ai.prompt.0.content", "caf\xe9 \xff")
			sp.SetName("chat \xfe")
		}
		post(td)
	}
	rows := waitForRuns(t, filepath.Join(dir, "data"), sent, c)
	victim = rows[0].CaseID

	forged := ptrace.NewTraces()
	ss := forged.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty()
	half := ss.Spans().AppendEmpty()
	half.SetTraceID(pcommon.TraceID{0xF0})
	half.SetSpanID(pcommon.SpanID{0xF0})
	half.Attributes().PutStr(replaycase.AttrCaseID, "c0ffee")
	full := ss.Spans().AppendEmpty()
	full.SetTraceID(pcommon.TraceID{0xF1})
	full.SetSpanID(pcommon.SpanID{0xF1})
	for k, v := range map[string]string{replaycase.AttrCaseID: victim, replaycase.AttrSchemaVersion: replaycase.SchemaVersion, replaycase.AttrStatus: "accepted", replaycase.AttrClosedBy: "root_ended"} {
		full.Attributes().PutStr(k, v)
	}
	post(forged)
	// One more real run after the forged spans, so that the forged ones have surely gone through.
	last := testfixtures.Traces(t, testfixtures.Traceloop)
	testfixtures.WithTraceID(last, plog.NewLogs(), 10)
	sent[last.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).TraceID().String()] = true
	post(last)
	rows = waitForRuns(t, filepath.Join(dir, "data"), sent, c)
	c.stop(t)

	require.Len(t, rows, len(sent), "one row per real run: nothing forged, nothing doubled")
	ids := map[string]bool{}
	for _, r := range rows {
		assert.False(t, ids[r.CaseID], "case %s written once", r.CaseID)
		ids[r.CaseID] = true
		assert.True(t, sent[r.Provenance.TraceID], "no row for a trace that was not a real run")
		assert.Len(t, r.Steps, 4, "steps of %s not doubled", r.CaseID)
		assert.Empty(t, invalidStrings(reflect.ValueOf(r)), "every string of case %s is valid UTF-8", r.CaseID)
		if r.HasReason(replaycase.ReasonInvalidUTF8) {
			assert.Equal(t, replaycase.StatusQuarantined, r.Status)
		}
	}
	flagged := 0
	for _, r := range rows {
		if r.HasReason(replaycase.ReasonInvalidUTF8) {
			flagged++
		}
	}
	assert.Equal(t, 1, flagged, "the run with invalid UTF-8 is flagged")
}

// invalidStrings walks a row (structs, slices, maps, pointers) and returns every string that is
// not valid UTF-8. (encoding/json would hide them: it replaces invalid bytes when it encodes.)
func invalidStrings(v reflect.Value) []string {
	var out []string
	switch v.Kind() {
	case reflect.String:
		if !utf8.ValidString(v.String()) {
			out = append(out, v.String())
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			out = append(out, invalidStrings(v.Elem())...)
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				out = append(out, invalidStrings(v.Field(i))...)
			}
		}
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return nil // raw OTLP protobuf bytes, not text
		}
		for i := 0; i < v.Len(); i++ {
			out = append(out, invalidStrings(v.Index(i))...)
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			out = append(out, invalidStrings(k)...)
			out = append(out, invalidStrings(v.MapIndex(k))...)
		}
	}
	return out
}

func TestInvalidStringsFindsThem(t *testing.T) {
	c := replaycase.Case{Steps: []replaycase.Step{{Name: "ok"}}, Metadata: map[string]string{"k": "v\xff"}}
	assert.Equal(t, []string{"v\xff"}, invalidStrings(reflect.ValueOf(c)))
}

// Problems 7 and 8 through the real collector and the Parquet exporter: a run whose spans have
// an all-zero trace id is one quarantined row (invalid_trace_id), and a trace of 5,000 spans with
// max_spans_per_trace 500 is ten rows that hold every span.
func TestZeroTraceIDAndOversizedTracesEndInRows(t *testing.T) {
	dir := t.TempDir()
	c := launchToParquet(t, dir, "{root_grace_period: 200ms, limits: {max_spans_per_trace: 500}}")
	post := func(td ptrace.Traces) { postProto(t, c.otlp, td) }

	zero := testfixtures.Traces(t, testfixtures.Traceloop)
	big := testfixtures.Traces(t, testfixtures.Traceloop)
	testfixtures.WithTraceID(big, plog.NewLogs(), 1)
	bigID := big.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).TraceID().String()
	tmpl := big.ResourceSpans().At(0).ScopeSpans().At(1).Spans().At(0)
	for i := big.SpanCount(); i < 5000; i++ {
		sp := big.ResourceSpans().At(0).ScopeSpans().At(1).Spans().AppendEmpty()
		tmpl.CopyTo(sp)
		sp.SetSpanID(pcommon.SpanID{0xEE, byte(i >> 8), byte(i)})
	}
	for i := 0; i < zero.ResourceSpans().Len(); i++ {
		for j := 0; j < zero.ResourceSpans().At(i).ScopeSpans().Len(); j++ {
			sps := zero.ResourceSpans().At(i).ScopeSpans().At(j).Spans()
			for k := 0; k < sps.Len(); k++ {
				sps.At(k).SetTraceID(pcommon.TraceID{})
			}
		}
	}
	post(zero)
	post(big)
	rows := waitForRuns(t, filepath.Join(dir, "data"), map[string]bool{"": true, bigID: true}, c)
	var spans int64
	var zeros, fragments int
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		spans, zeros, fragments = 0, 0, 0
		for _, r := range rows {
			switch r.Provenance.TraceID {
			case "":
				zeros++
				assert.True(t, r.HasReason(replaycase.ReasonInvalidTraceID))
				assert.Equal(t, replaycase.StatusQuarantined, r.Status)
			case bigID:
				spans += r.Provenance.SpanCount
				if r.HasReason(replaycase.ReasonLateSpans) {
					fragments++
				}
			}
		}
		if spans >= 5000 || time.Now().After(deadline) {
			break
		}
		rows = datasetRows(t, filepath.Join(dir, "data"))
	}
	c.stop(t)
	assert.Equal(t, 1, zeros, "one row for the run without a trace id")
	assert.Equal(t, int64(5000), spans, "every span of the big trace is in a row")
	assert.Equal(t, 9, fragments, "500 spans per case: the first case and nine fragments")
}
