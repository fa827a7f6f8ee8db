package e2e

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/internal/testcollector"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/replaycase"
)

// manyRuns is n copies of the traceloop run, each with its own trace id, as one OTLP/JSON body.
func manyRuns(t *testing.T, first, n int) []byte {
	td := ptrace.NewTraces()
	for i := first; i < first+n; i++ {
		run := testfixtures.Traces(t, testfixtures.Traceloop)
		testfixtures.WithTraceID(run, plog.NewLogs(), i)
		run.ResourceSpans().MoveAndAppendTo(td.ResourceSpans())
	}
	body, err := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
	require.NoError(t, err)
	return body
}

// datasetCaseIDs reads every case id in cases/; a file that cannot be read fails the test.
func datasetCaseIDs(t *testing.T, root string) map[string]int {
	ids := map[string]int{}
	_ = filepath.WalkDir(filepath.Join(root, "cases"), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		require.True(t, strings.HasSuffix(path, ".parquet"), "only complete .parquet files in the dataset: %s", path)
		rows, err := parquet.ReadFile[replaycase.Case](path)
		require.NoError(t, err, "a partial or unreadable file in the dataset: %s", path)
		for _, c := range rows {
			ids[c.CaseID]++
		}
		return nil
	})
	return ids
}

var parquetFile = regexp.MustCompile(`\.parquet$`)

// The collector is killed with SIGKILL while the exporter is writing: the dataset holds only
// complete files, and with the persistent queue every case the exporter had accepted is there
// after a restart, once.
func TestCrashLeavesNoPartialFileAndLosesNoAcceptedCase(t *testing.T) {
	dir := t.TempDir()
	otlpPort, metricsPort := testcollector.FreePort(t), testcollector.FreePort(t)
	cfg := fmt.Sprintf(`
extensions:
  file_storage:
    directory: %[1]s/queue
    create_directory: true
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:%[2]d
processors:
  replay_case:
    root_grace_period: 20ms
exporters:
  replay_parquet:
    directory: %[1]s/data
    max_rows_per_file: 10
    sending_queue:
      storage: file_storage
      num_consumers: 1
      queue_size: 268435456   # bytes: the exporter's queue is sized in bytes
      batch:
        flush_timeout: 50ms
        sizer: items
        min_size: 500
  nop:
service:
  extensions: [file_storage]
  telemetry: {metrics: {level: normal, readers: [{pull: {exporter: {prometheus: {host: 127.0.0.1, port: %[3]d}}}}]}}
  pipelines:
    traces:
      receivers: [otlp]
      processors: [replay_case]
      exporters: [replay_parquet]
    logs:
      receivers: [otlp]
      processors: [replay_case]
      exporters: [nop]
`, dir, otlpPort, metricsPort)
	metrics := fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort)
	root := filepath.Join(dir, "data")

	run := func() *collector { return launch(t, cfg, otlpPort) }

	const runs, perRequest = 2000, 100
	first := run()
	for i := 0; i < runs; i += perRequest {
		resp, err := http.Post(first.otlp+"/v1/traces", "application/json", strings.NewReader(string(manyRuns(t, i, perRequest))))
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
	}
	// Every run has become a case and the exporter's persistent queue has accepted it.
	deadline := time.Now().Add(30 * time.Second)
	for testcollector.Metric(metrics, "otelcol_processor_replay_case_cases_closed") < runs {
		require.True(t, time.Now().Before(deadline), "cases not closed in time:\n%s", first.output)
		time.Sleep(5 * time.Millisecond)
	}
	require.Zero(t, testcollector.Metric(metrics, "otelcol_processor_replay_case_emit_failures"))
	// Killed as soon as a batch is being published (its first cases/ file is visible): its
	// journal is committed and its queue items are not done yet, the window where the queue
	// delivers a written batch again after the restart.
	for !anyFile(t, filepath.Join(root, "cases"), parquetFile) {
		require.True(t, time.Now().Before(deadline), "no case published in time:\n%s", first.output)
		time.Sleep(time.Millisecond)
	}
	require.NoError(t, first.cmd.Process.Kill()) // SIGKILL, mid-write
	_ = first.cmd.Wait()

	before := datasetCaseIDs(t, root)
	t.Logf("cases in the dataset when the collector was killed: %d of %d", len(before), runs)

	second := run()
	deadline = time.Now().Add(60 * time.Second)
	var after map[string]int
	for {
		after = datasetCaseIDs(t, root)
		if len(after) >= runs || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	second.stop(t)
	assert.Len(t, after, runs, "every accepted case is in the dataset after the restart")
	dups := 0
	for _, n := range after {
		dups += n - 1
	}
	t.Logf("after restart: %d distinct cases, %d duplicate rows", len(after), dups)
	// The batch being written at the kill is delivered again by the queue after the restart; the
	// exporter knows its cases were committed and does not write them twice.
	assert.Zero(t, dups, "no case is written twice")
}
