package scrubbing

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/internal/testcollector"
	"github.com/reprise-dev/reprise/internal/testdataset"
)

// binary is the collector under test (see testcollector.Main).
var binary string

func TestMain(m *testing.M) {
	os.Exit(testcollector.Main(m, &binary))
}

// The planted run goes through the collector as a process, as a user runs it: OTLP/HTTP in,
// the replay_case processor, a persistent file_storage queue in front of the Parquet exporter,
// and the debug exporter at verbosity detailed with the collector's own log at debug level.
// No planted byte string may appear in the queue directory, under the dataset root, or in the
// collector's log.
func TestPlantedSecretsNeverReachTheQueueOrTheCollectorLog(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the collector")
	}
	dir := t.TempDir()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	config := fmt.Sprintf(`
extensions:
  file_storage: {directory: %[1]s/queue, create_directory: true}
receivers:
  otlp: {protocols: {http: {endpoint: "127.0.0.1:%[2]d"}}}
processors:
  replay_case:
    root_grace_period: 500ms
    raw_spans: all
    scrub: {key_file: %[1]s/scrub.key}
exporters:
  replay_parquet:
    directory: %[1]s/data
    staging_directory: %[1]s/staging
    compression: zstd
    sending_queue: {storage: file_storage, batch: {flush_timeout: 500ms}}
  debug: {verbosity: detailed}
service:
  extensions: [file_storage]
  telemetry: {logs: {level: debug}, metrics: {level: none}}
  pipelines:
    traces: {receivers: [otlp], processors: [replay_case], exporters: [replay_parquet, debug]}
    logs: {receivers: [otlp], processors: [replay_case], exporters: [debug]}
`, dir, port)
	configPath := filepath.Join(dir, "config.yaml")
	require.NoError(t, os.WriteFile(configPath, []byte(config), 0o600))
	logFile, err := os.Create(filepath.Join(t.TempDir(), "collector.log"))
	require.NoError(t, err)
	defer logFile.Close()
	output := func() []byte { b, _ := os.ReadFile(logFile.Name()); return b }
	cmd := exec.Command(binary, "--config", configPath)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	endpoint := fmt.Sprintf("http://127.0.0.1:%d", port)
	require.Eventually(t, func() bool {
		conn, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			conn.Close()
		}
		return err == nil
	}, 30*time.Second, 50*time.Millisecond, "collector did not start:\n%s", output())

	td, ld := plantedRun(t)
	logs, err := (&plog.JSONMarshaler{}).MarshalLogs(ld)
	require.NoError(t, err)
	traces, err := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
	require.NoError(t, err)
	for _, req := range []struct {
		path string
		body []byte
	}{{"/v1/logs", logs}, {"/v1/traces", traces}} {
		resp, err := http.Post(endpoint+req.path, "application/json", bytes.NewReader(req.body))
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
	}
	require.Eventually(t, func() bool {
		files, _ := filepath.Glob(filepath.Join(dir, "data", "cases", "*", "*.parquet"))
		return len(files) > 0
	}, 30*time.Second, 100*time.Millisecond, "no case written:\n%s", output())

	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		require.NoError(t, err, "%s", output())
	case <-time.After(30 * time.Second):
		t.Fatalf("collector did not stop:\n%s", output())
	}

	read := func(sub string) []byte {
		var all []byte
		require.NoError(t, filepath.WalkDir(filepath.Join(dir, sub), func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(path)
			all = append(all, b...)
			return err
		}))
		return all
	}
	queue, data, log := read("queue"), read("data"), output()
	rows, n := testdataset.DecodedValues(t, filepath.Join(dir, "data"))
	require.Positive(t, n)
	require.NotEmpty(t, queue, "the queue directory holds the file_storage database")
	require.Contains(t, string(log), "<secret:openai_api_key:", "the debug exporter printed the scrubbed spans")
	require.Contains(t, string(rows), "<secret:openai_api_key:", "the decoded rows hold the placeholders")
	for _, p := range append(planted, partsPlanted()...) {
		for _, form := range []string{p.Must(), jsonEscape(p.Must())} {
			assert.False(t, bytes.Contains(queue, []byte(form)), "%s (%q) in the queue directory", p.Kind, form)
			assert.False(t, bytes.Contains(data, []byte(form)), "%s (%q) under the dataset root", p.Kind, form)
			assert.False(t, bytes.Contains(rows, []byte(form)), "%s (%q) in the decoded rows", p.Kind, form)
			assert.False(t, bytes.Contains(log, []byte(form)), "%s (%q) in the collector's log", p.Kind, form)
		}
	}
}
