package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/internal/testcollector"
	"github.com/reprise-dev/reprise/replaycase"
)

// handoffConfig is config/local.yaml's durability chain: the processor's write-ahead storage,
// an exporter without a queue that stages every hand-off as a durable segment, and segments
// merged after fileMaxAge.
func handoffConfig(dir string, otlpPort, metricsPort int, fileMaxAge string) string {
	return fmt.Sprintf(`
extensions:
  file_storage:
    directory: %[1]s/storage
    create_directory: true
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:%[2]d
processors:
  replay_case:
    root_grace_period: 50ms
    storage: file_storage
exporters:
  replay_parquet:
    directory: %[1]s/data
    file_max_age: %[4]s
    sending_queue: {enabled: false}
    retry_on_failure: {enabled: false}
service:
  extensions: [file_storage]
  telemetry: {metrics: {level: normal, readers: [{pull: {exporter: {prometheus: {host: 127.0.0.1, port: %[3]d}}}}]}}
  pipelines:
    traces:
      receivers: [otlp]
      processors: [replay_case]
      exporters: [replay_parquet]
`, dir, otlpPort, metricsPort, fileMaxAge)
}

// stagedSegments lists the segments (committed batches waiting to be merged) in staging.
func stagedSegments(t *testing.T, staging string) []string {
	entries, err := os.ReadDir(staging)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		if e.IsDir() && strings.HasPrefix(e.Name(), "segment-") {
			names = append(names, e.Name())
		}
	}
	return names
}

// kill -9 after the hand-off: every case was written to a segment, the processor has released
// its write-ahead records (nothing buffered is left), and nothing is merged yet (file_max_age
// 5m). The cases now exist only in the staged segments, which a restarted collector adopts
// once they are old enough not to belong to a live collector sharing the folder (15 min; the
// test ages them rather than wait): every run ends in exactly one row.
func TestKillNineBetweenHandOffAndMergeLosesNoCase(t *testing.T) {
	const runs = 200
	dir := t.TempDir()
	otlpPort, metricsPort := testcollector.FreePort(t), testcollector.FreePort(t)
	metrics := fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort)
	cfg := handoffConfig(dir, otlpPort, metricsPort, "5m")
	first := launch(t, cfg, otlpPort)
	s := &sender{url: first.otlp}
	sent, err := sendAll(t, s, runs, 4)
	require.NoError(t, err)
	deadline := time.Now().Add(30 * time.Second)
	for testcollector.Metric(metrics, "otelcol_processor_replay_case_cases_closed") < runs ||
		testcollector.Metric(metrics, "otelcol_processor_replay_case_buffered_bytes") != 0 {
		require.True(t, time.Now().Before(deadline), "cases not handed off in time:\n%s", first.output)
		time.Sleep(10 * time.Millisecond)
	}
	require.Zero(t, testcollector.Metric(metrics, "otelcol_processor_replay_case_emit_failures"))
	time.Sleep(200 * time.Millisecond) // the deletion of the write-ahead records is committed
	require.NoError(t, first.cmd.Process.Kill())
	_ = first.cmd.Wait()

	root, staging := filepath.Join(dir, "data"), filepath.Join(dir, "data.staging")
	assert.Empty(t, datasetRows(t, root), "nothing was merged before the kill")
	segments := stagedSegments(t, staging)
	require.NotEmpty(t, segments, "the cases are in staged segments")
	old := time.Now().Add(-16 * time.Minute)
	for _, name := range segments {
		require.NoError(t, os.Chtimes(filepath.Join(staging, name), old, old))
	}

	// Adopted segments are merged file_max_age after the restart: shorten it, not to wait 5m.
	second := launch(t, handoffConfig(dir, otlpPort, metricsPort, "100ms"), otlpPort)
	rows := waitForRuns(t, root, sent, second)
	primary, ids := map[string]int{}, map[string]int{}
	for _, r := range rows {
		ids[r.CaseID]++
		if !r.HasReason(replaycase.ReasonLateSpans) {
			primary[r.Provenance.TraceID]++
		}
	}
	for id := range sent {
		assert.Equal(t, 1, primary[id], "run %s: one row", id)
	}
	for id, n := range ids {
		assert.Equal(t, 1, n, "case %s written once", id)
	}
	assert.Zero(t, testcollector.Metric(metrics, "otelcol_processor_replay_case_cases_closed"),
		"the restarted processor had nothing left to send: the segments alone hold the cases")
	second.stop(t)
}
