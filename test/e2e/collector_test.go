// Package e2e runs the reprise collector built from this repository as a user would: a real
// process, real OTLP/HTTP requests with the fixture runs, cases received by a real OTLP/HTTP
// endpoint downstream.
package e2e

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/reprise-dev/reprise/internal/testcollector"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/replaycase"
)

var binary string

func TestMain(m *testing.M) {
	os.Exit(testcollector.Main(m, &binary))
}

// downstream is an OTLP/HTTP traces endpoint that decodes the cases it receives.
type downstream struct {
	*httptest.Server
	refusing atomic.Bool // answer 503, like a backend that is overloaded
	mu       sync.Mutex
	cases    []*replaycase.Case
}

func newDownstream(t *testing.T) *downstream {
	d := &downstream{}
	d.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if d.refusing.Load() {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		body, _ := io.ReadAll(r.Body)
		req := ptraceotlp.NewExportRequest()
		if err := req.UnmarshalProto(body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		cases, err := replaycase.Decode(req.Traces())
		if err != nil {
			t.Errorf("downstream: %v", err)
		}
		d.mu.Lock()
		d.cases = append(d.cases, cases...)
		d.mu.Unlock()
		resp, _ := ptraceotlp.NewExportResponse().MarshalProto()
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(resp)
	}))
	t.Cleanup(d.Close)
	return d
}

func (d *downstream) waitCases(t *testing.T, n int) []*replaycase.Case {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		d.mu.Lock()
		got := append([]*replaycase.Case(nil), d.cases...)
		d.mu.Unlock()
		if len(got) >= n {
			return got
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("downstream received fewer than %d cases", n)
	return nil
}

type collector struct {
	cmd    *exec.Cmd
	output *testcollector.Output
	otlp   string
}

// launch runs the collector with the given config and waits until its OTLP/HTTP receiver on
// otlpPort accepts connections. It is killed when the test ends.
func launch(t *testing.T, config string, otlpPort int) *collector {
	t.Helper()
	p := testcollector.Launch(t, binary, config, nil, otlpPort)
	return &collector{cmd: p.Cmd, output: p.Output, otlp: fmt.Sprintf("http://127.0.0.1:%d", otlpPort)}
}

// startCollector runs the binary with config/local.yaml's pipelines, its OTLP/HTTP receiver on
// a free port and an otlp_http exporter to d next to the debug exporter.
func startCollector(t *testing.T, d *downstream, processorCfg string) *collector {
	t.Helper()
	otlpPort := testcollector.FreePort(t)
	cfg := fmt.Sprintf(`
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:%d
processors:
  replay_case:
%s
exporters:
  debug:
    verbosity: detailed
  otlp_http:
    endpoint: %s
    compression: none
    retry_on_failure:
      enabled: false
service:
  telemetry:
    metrics:
      level: none
  pipelines:
    traces:
      receivers: [otlp]
      processors: [replay_case]
      exporters: [debug, otlp_http]
    logs:
      receivers: [otlp]
      processors: [replay_case]
      exporters: [debug]
`, otlpPort, processorCfg, d.URL)
	return launch(t, cfg, otlpPort)
}

func (c *collector) post(t *testing.T, signal, file string) {
	t.Helper()
	body, err := os.ReadFile(file)
	require.NoError(t, err)
	resp, err := http.Post(c.otlp+"/v1/"+signal, "application/json", bytes.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
}

func (c *collector) stop(t *testing.T) {
	t.Helper()
	c.output.WaitUntilSignalsAreHandled(t)
	require.NoError(t, c.cmd.Process.Signal(syscall.SIGTERM))
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	select {
	case err := <-done:
		require.NoError(t, err, c.output.String())
	case <-time.After(20 * time.Second):
		t.Fatalf("collector did not stop:\n%s", c.output)
	}
}

func TestFixtureRunBecomesACaseDownstream(t *testing.T) {
	d := newDownstream(t)
	c := startCollector(t, d, "    root_grace_period: 300ms\n    assertions:\n      expected: span.attributes[\"app.expected\"]")
	dir := filepath.Join(testfixtures.Dir(), testfixtures.OTelEvents)
	c.post(t, "logs", filepath.Join(dir, "logs.json"))
	c.post(t, "traces", filepath.Join(dir, "traces.json"))
	cases := d.waitCases(t, 1)
	require.Len(t, cases, 1)
	got := cases[0]
	assert.Equal(t, replaycase.StatusAccepted, got.Status, "%v", got.Reasons)
	assert.Equal(t, "weather-bot", got.AgentName)
	assert.Equal(t, "mentions Paris weather", got.Assertions["expected"])
	assert.Len(t, got.Steps, 4)
	assert.Contains(t, got.FinalOutput.Parts[0].Content, "it is mild in Paris")
	c.stop(t)
	assert.Contains(t, c.output.String(), "replay.case_id: Str("+got.CaseID+")", "the debug exporter shows the case")
}

func TestShutdownFlushesOpenCasesDownstream(t *testing.T) {
	d := newDownstream(t)
	c := startCollector(t, d, "    idle_timeout: 10m\n    max_age: 10m")
	td := testfixtures.Traces(t, testfixtures.Traceloop)
	td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().RemoveIf(func(sp ptrace.Span) bool { return sp.ParentSpanID().IsEmpty() })
	body, err := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
	require.NoError(t, err)
	file := filepath.Join(t.TempDir(), "rootless.json")
	require.NoError(t, os.WriteFile(file, body, 0o600))
	c.post(t, "traces", file)
	time.Sleep(300 * time.Millisecond)
	c.stop(t)
	cases := d.waitCases(t, 1)
	assert.Equal(t, replaycase.StatusQuarantined, cases[0].Status)
	assert.Equal(t, replaycase.ClosedShutdown, cases[0].ClosedBy)
	assert.True(t, cases[0].HasReason(replaycase.ReasonShutdown))
	assert.True(t, cases[0].HasReason(replaycase.ReasonNoRootSpan))
}

func TestBadConfigGetsAClearError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.yaml")
	require.NoError(t, os.WriteFile(path, []byte(`
receivers: {otlp: {protocols: {http: {endpoint: "127.0.0.1:0"}}}}
processors: {replay_case: {root_grace_period: 0s, evidence: {require: [model_anwser]}}}
exporters: {debug: {}}
service: {pipelines: {traces: {receivers: [otlp], processors: [replay_case], exporters: [debug]}}}
`), 0o600))
	out, err := exec.Command(binary, "validate", "--config", path).CombinedOutput()
	require.Error(t, err)
	assert.Contains(t, string(out), "processors::replay_case")
	assert.Contains(t, string(out), "root_grace_period must be positive, got 0s")
	assert.Contains(t, string(out), `evidence.require: unknown check "model_anwser"`)
}

func TestLocalConfigIsValid(t *testing.T) {
	out, err := exec.Command(binary, "validate", "--config", filepath.Join(testcollector.RepoRoot(), "config", "local.yaml")).CombinedOutput()
	require.NoError(t, err, string(out))
	assert.False(t, strings.Contains(string(out), "rror"), string(out))
}

// With every batch published at once (exporter flush 2 s, file_max_age 0s; config/local.yaml
// merges batches for 10 s to write fewer, larger files) and the extension's 1 s refresh, a case
// is replayable within 5 s of its trace closing — also when two collectors write into the same
// root.
func TestCasesReplayableWithinFiveSecondsFromTwoCollectors(t *testing.T) {
	dir := t.TempDir()
	replayPort := testcollector.FreePort(t)
	var otlp []string
	for i := 0; i < 2; i++ {
		otlpPort := testcollector.FreePort(t)
		ext := ""
		if i == 0 {
			ext = fmt.Sprintf("extensions:\n  replay: {endpoint: 127.0.0.1:%d, directory: %s/data}\n", replayPort, dir)
		}
		cfg := ext + fmt.Sprintf(`
receivers: {otlp: {protocols: {http: {endpoint: 127.0.0.1:%d}}}}
processors: {replay_case: {root_grace_period: 500ms}}
exporters:
  # file_max_age 0s: this test measures the 5 s freshness of batches published at once
  replay_parquet: {directory: %s/data, staging_directory: %s/staging-%d, file_max_age: 0s, sending_queue: {batch: {flush_timeout: 2s}}}
  nop: {}
service:
  extensions: [%s]
  telemetry: {metrics: {level: none}}
  pipelines:
    traces: {receivers: [otlp], processors: [replay_case], exporters: [replay_parquet]}
    logs: {receivers: [otlp], processors: [replay_case], exporters: [nop]}
`, otlpPort, dir, dir, i, map[bool]string{true: "replay", false: ""}[i == 0])
		otlp = append(otlp, launch(t, cfg, otlpPort).otlp)
	}
	runs := []string{testfixtures.Traceloop, testfixtures.OpenInference}
	sent := time.Now()
	for i, run := range runs {
		resp, err := http.Post(otlp[i]+"/v1/traces", "application/json", bytes.NewReader(readFixture(t, run)))
		require.NoError(t, err)
		resp.Body.Close()
	}
	closed := sent.Add(500 * time.Millisecond) // the root grace period
	for _, service := range []string{"holdout-agent-traceloop", "holdout-agent-openinference"} {
		for {
			resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/v1/cases?agent=weather-bot", replayPort))
			if err == nil {
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if strings.Contains(string(body), service) {
					break
				}
			}
			require.Less(t, time.Since(closed), 5*time.Second, "%s not replayable within 5 s of its trace closing", service)
			time.Sleep(50 * time.Millisecond)
		}
		t.Logf("%s replayable %s after its trace closed", service, time.Since(closed).Round(10*time.Millisecond))
	}
}

func readFixture(t *testing.T, run string) []byte {
	b, err := os.ReadFile(filepath.Join(testfixtures.Dir(), run, "traces.json"))
	require.NoError(t, err)
	return b
}
