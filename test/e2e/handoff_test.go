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
)

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

// kill -9 after the hand-off, with config/local.yaml's chain (overloadConfig: the processor's
// write-ahead storage, the exporter without a queue): every case was written to a segment, the
// processor has released its write-ahead records (nothing buffered is left), and nothing is
// merged yet (file_max_age 5m). The cases now exist only in the staged segments, which the
// restarted collector adopts at its start: their owner's lock died with the killed process
// (dataset/segment_owner.go). Every run ends in exactly one row, within seconds.
func TestKillNineBetweenHandOffAndMergeLosesNoCase(t *testing.T) {
	const runs = 200
	dir := t.TempDir()
	otlpPort, metricsPort := testcollector.FreePort(t), testcollector.FreePort(t)
	metrics := fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort)
	cfg := overloadConfig(dir, otlpPort, metricsPort, 10000, "50ms", "5m")
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
	require.NoError(t, first.cmd.Process.Kill())
	_ = first.cmd.Wait()

	root, staging := filepath.Join(dir, "data"), filepath.Join(dir, "data.staging")
	assert.Empty(t, datasetRows(t, root), "nothing was merged before the kill")
	segments := stagedSegments(t, staging)
	require.NotEmpty(t, segments, "the cases are in staged segments")

	// Adopted segments are merged file_max_age after the restart: shorten it, not to wait 5m.
	second := launch(t, overloadConfig(dir, otlpPort, metricsPort, 10000, "50ms", "100ms"), otlpPort)
	rows := waitForRuns(t, root, sent, second)
	assertOneRowEach(t, rows, sent)
	assert.Zero(t, testcollector.Metric(metrics, "otelcol_processor_replay_case_cases_closed"),
		"the restarted processor had nothing left to send: the segments alone hold the cases")
	second.stop(t)
}
