package e2e

import (
	"bytes"
	"fmt"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/internal/testcollector"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/replaycase"
)

// selectingCollector runs the collector with a select rule set and a sample rate, traces and
// logs through replay_case into replay_parquet under dir/data, and Prometheus metrics.
func selectingCollector(t *testing.T, dir string) (c *collector, metrics string) {
	otlpPort, metricsPort := testcollector.FreePort(t), testcollector.FreePort(t)
	cfg := fmt.Sprintf(`
receivers: {otlp: {protocols: {http: {endpoint: "127.0.0.1:%[1]d"}}}}
processors:
  replay_case:
    root_grace_period: 200ms
    select:
      rules:
        error_root: IsRootSpan() and span.status.code == STATUS_CODE_ERROR
        failed_tool: span.attributes["gen_ai.operation.name"] == "execute_tool" and span.status.code == STATUS_CODE_ERROR
        low_score: log.event_name == "gen_ai.evaluation.result" and log.attributes["gen_ai.evaluation.score.value"] < 0.5
        negative_feedback: span.attributes["app.user_feedback"] == "negative"
      sample_rate: 0.2
exporters:
  debug: {verbosity: basic}
  replay_parquet: {directory: %[2]s/data, sending_queue: {batch: {flush_timeout: 100ms}}}
service:
  telemetry: {metrics: {level: normal, readers: [{pull: {exporter: {prometheus: {host: 127.0.0.1, port: %[3]d}}}}]}}
  pipelines:
    traces: {receivers: [otlp], processors: [replay_case], exporters: [replay_parquet]}
    logs: {receivers: [otlp], processors: [replay_case], exporters: [debug]}
  `, otlpPort, dir, metricsPort)
	return launch(t, cfg, otlpPort), fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort)
}

// selectionRun is one recorded run (otel-events) under trace id n, its spans changed by edit.
func selectionRun(t *testing.T, n int, edit func(sp ptrace.Span, ld plog.Logs)) (ptrace.Traces, plog.Logs, string) {
	td, ld := testfixtures.Traces(t, testfixtures.OTelEvents), testfixtures.Logs(t, testfixtures.OTelEvents)
	testfixtures.WithTraceID(td, ld, n)
	var id string
	for i := 0; i < td.ResourceSpans().Len(); i++ {
		for j := 0; j < td.ResourceSpans().At(i).ScopeSpans().Len(); j++ {
			spans := td.ResourceSpans().At(i).ScopeSpans().At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				id = spans.At(k).TraceID().String()
				if edit != nil {
					edit(spans.At(k), ld)
				}
			}
		}
	}
	return td, ld, id
}

// postLogs sends ld as one OTLP/HTTP protobuf request and requires a 200.
func postLogs(t *testing.T, otlp string, ld plog.Logs) {
	body, err := plogotlp.NewExportRequestFromLogs(ld).MarshalProto()
	require.NoError(t, err)
	postOTLP(t, otlp, "logs", body)
}

// postOTLP posts an OTLP/HTTP protobuf body for signal (traces, logs) and requires a 200.
func postOTLP(t *testing.T, otlp, signal string, body []byte) {
	resp, err := http.Post(otlp+"/v1/"+signal, "application/x-protobuf", bytes.NewReader(body))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
}

// The scenario through two collector processes: an error root, a failed tool, a low
// evaluation score, negative feedback and plain successes. Exactly the ruled runs become cases
// under their rule, the sample is the same in both processes, and the counts reconcile.
func TestSelectionThroughTwoCollectors(t *testing.T) {
	const plain = 60
	type sent struct {
		td ptrace.Traces
		ld plog.Logs
	}
	var runs []sent
	want := map[string]string{}
	add := func(n int, by string, edit func(ptrace.Span, plog.Logs)) {
		td, ld, id := selectionRun(t, n, edit)
		runs = append(runs, sent{td, ld})
		if by != "" {
			want[id] = by
		}
	}
	isRoot := func(sp ptrace.Span) bool { return sp.ParentSpanID().IsEmpty() }
	add(1, "error_root", func(sp ptrace.Span, _ plog.Logs) {
		if isRoot(sp) {
			sp.Status().SetCode(ptrace.StatusCodeError)
		}
	})
	add(2, "failed_tool", func(sp ptrace.Span, _ plog.Logs) {
		if v, _ := sp.Attributes().Get("gen_ai.operation.name"); v.Str() == "execute_tool" {
			sp.Status().SetCode(ptrace.StatusCodeError)
		}
	})
	add(3, "low_score", func(sp ptrace.Span, ld plog.Logs) {
		if isRoot(sp) {
			lr := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().AppendEmpty()
			lr.SetTraceID(sp.TraceID())
			lr.SetEventName("gen_ai.evaluation.result")
			lr.Attributes().PutDouble("gen_ai.evaluation.score.value", 0.1)
		}
	})
	add(4, "negative_feedback", func(sp ptrace.Span, _ plog.Logs) {
		if isRoot(sp) {
			sp.Attributes().PutStr("app.user_feedback", "negative")
		}
	})
	for i := 0; i < plain; i++ {
		add(100+i, "", nil)
	}

	results := make([]map[string]string, 2)
	for p := range results {
		dir := t.TempDir()
		c, metrics := selectingCollector(t, dir)
		for _, r := range runs {
			postLogs(t, c.otlp, r.ld)
			postProto(t, c.otlp, r.td)
		}
		deadline := time.Now().Add(60 * time.Second)
		for testcollector.Metric(metrics, "otelcol_processor_replay_case_selected_runs")+testcollector.Metric(metrics, "otelcol_processor_replay_case_unselected_runs") < float64(len(runs)) {
			require.True(t, time.Now().Before(deadline), "runs not all decided:\n%s", c.output)
			time.Sleep(100 * time.Millisecond)
		}
		selected := testcollector.Metric(metrics, "otelcol_processor_replay_case_selected_runs")
		var rows []replaycase.Case
		for len(rows) < int(selected) {
			require.True(t, time.Now().Before(deadline), "rows missing: %d of %v", len(rows), selected)
			time.Sleep(100 * time.Millisecond)
			rows = datasetRows(t, filepath.Join(dir, "data"))
		}
		assert.Equal(t, float64(len(runs)), selected+testcollector.Metric(metrics, "otelcol_processor_replay_case_unselected_runs"), "every run is selected or counted as not")
		assert.Equal(t, selected, testcollector.Metric(metrics, "otelcol_processor_replay_case_cases_closed"), "every selected run is a case")
		c.stop(t)
		rows = datasetRows(t, filepath.Join(dir, "data"))
		require.Len(t, rows, int(selected), "one row per selected run")
		results[p] = map[string]string{}
		for _, r := range rows {
			results[p][r.Provenance.TraceID] = r.SelectedBy
		}
	}

	for id, by := range want {
		assert.Equal(t, by, results[0][id], "trace %s", id)
	}
	sampled := 0
	for id, by := range results[0] {
		if _, ruled := want[id]; !ruled {
			assert.Equal(t, "sample", by, "a plain success is a case only through the sample: %s", id)
			sampled++
		}
	}
	assert.Positive(t, sampled, "20 %% of %d runs", plain)
	assert.Less(t, sampled, plain/2)
	assert.Equal(t, results[0], results[1], "both collector processes keep the same runs for the same reasons")
}
