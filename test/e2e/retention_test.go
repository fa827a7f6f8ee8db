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
	"github.com/reprise-dev/reprise/internal/testfixtures"
)

// The collector with retention in days deletes, at start, the partitions past their age and
// nothing else; the dataset stays readable and new cases keep arriving.
func TestRetentionInTheCollectorRemovesOnlyExpiredPartitions(t *testing.T) {
	dir := t.TempDir()
	c := launchToParquet(t, dir, "{root_grace_period: 200ms}")
	fixture := filepath.Join(testfixtures.Dir(), testfixtures.OTelEvents)
	c.post(t, "traces", filepath.Join(fixture, "traces.json"))
	root := filepath.Join(dir, "data")
	deadline := time.Now().Add(30 * time.Second)
	for len(datasetRows(t, root)) == 0 {
		require.True(t, time.Now().Before(deadline), "no row:\n%s", c.output)
		time.Sleep(100 * time.Millisecond)
	}
	c.stop(t)

	// Copies of the published files into a partition 200 days old, written long ago.
	expired := time.Now().UTC().AddDate(0, 0, -200).Format(time.DateOnly)
	old := time.Now().Add(-200 * 24 * time.Hour)
	var current, aged []string
	require.NoError(t, filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".parquet") {
			return err
		}
		current = append(current, path)
		ds := filepath.Base(filepath.Dir(filepath.Dir(path)))
		dst := filepath.Join(root, ds, "dt="+expired, filepath.Base(path))
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(filepath.Dir(dst), 0o755))
		require.NoError(t, os.WriteFile(dst, data, 0o644))
		aged = append(aged, dst)
		return os.Chtimes(dst, old, old)
	}))
	require.NotEmpty(t, aged)

	otlpPort := testcollector.FreePort(t)
	c = launch(t, fmt.Sprintf(`
receivers: {otlp: {protocols: {http: {endpoint: "127.0.0.1:%d"}}}}
processors: {replay_case: {root_grace_period: 200ms}}
exporters:
  replay_parquet: {directory: %s, retention: {cases: 180d, quarantine: 30d, failed: 14d}}
service:
  telemetry: {metrics: {level: none}}
  pipelines: {traces: {receivers: [otlp], processors: [replay_case], exporters: [replay_parquet]}}
`, otlpPort, root), otlpPort)
	for !strings.Contains(c.output.String(), "retention removed expired data") {
		require.True(t, time.Now().Before(deadline), "retention did not run:\n%s", c.output)
		time.Sleep(100 * time.Millisecond)
	}
	c.stop(t)
	for _, p := range aged {
		assert.NoFileExists(t, p)
	}
	for _, p := range current {
		assert.FileExists(t, p, "a partition younger than its retention stays")
	}
	assert.NotEmpty(t, datasetRows(t, root))
	assert.Contains(t, c.output.String(), `"dt": "`+expired+`"`)
}
