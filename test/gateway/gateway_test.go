// Package gateway builds the example user distribution (examples/custom-distribution) with
// ocb, exactly as the guide docs/custom-collector.md says, and runs it with config/gateway.yaml:
// one OTLP receiver fanned out to an unchanged trace backend and to replay cases.
package gateway

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/reprise-dev/reprise/internal/testcollector"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/replaycase"
)

var binary = filepath.Join(testcollector.RepoRoot(), "_build", "gateway", "otelcol-gateway")

// TestMain runs the guide's build command; the binary lands in ./_build/gateway.
func TestMain(m *testing.M) {
	build := exec.Command("examples/custom-distribution/build.sh")
	build.Dir = testcollector.RepoRoot()
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building the example distribution:", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// backend is a trace backend: an OTLP/HTTP endpoint that keeps what it receives.
type backend struct {
	*httptest.Server
	mu     sync.Mutex
	traces []ptrace.Traces
	logs   []plog.Logs
}

func newBackend(t *testing.T) *backend {
	b := &backend{}
	b.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in io.Reader = r.Body
		if r.Header.Get("Content-Encoding") == "gzip" { // the otlp_http exporter's default
			zr, err := gzip.NewReader(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			in = zr
		}
		body, _ := io.ReadAll(in)
		b.mu.Lock()
		defer b.mu.Unlock()
		var resp []byte
		switch r.URL.Path {
		case "/v1/traces":
			req := ptraceotlp.NewExportRequest()
			if err := req.UnmarshalProto(body); err != nil {
				t.Errorf("backend: %v", err)
			}
			b.traces = append(b.traces, req.Traces())
			resp, _ = ptraceotlp.NewExportResponse().MarshalProto()
		case "/v1/logs":
			req := plogotlp.NewExportRequest()
			if err := req.UnmarshalProto(body); err != nil {
				t.Errorf("backend: %v", err)
			}
			b.logs = append(b.logs, req.Logs())
			resp, _ = plogotlp.NewExportResponse().MarshalProto()
		default:
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(resp)
	}))
	t.Cleanup(b.Close)
	return b
}

// spans is every span the backend received, by span id, as OTLP/JSON of the span alone.
func (b *backend) spans() map[string]string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return spansByID(b.traces...)
}

func (b *backend) logRecords() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, ld := range b.logs {
		n += ld.LogRecordCount()
	}
	return n
}

// spansByID renders each span (name, ids, times, attributes, events, status) as JSON, so that
// "untouched" is checked field by field whatever batching did to the resource grouping.
func spansByID(tds ...ptrace.Traces) map[string]string {
	out := map[string]string{}
	for _, td := range tds {
		for i := 0; i < td.ResourceSpans().Len(); i++ {
			rs := td.ResourceSpans().At(i)
			for j := 0; j < rs.ScopeSpans().Len(); j++ {
				spans := rs.ScopeSpans().At(j).Spans()
				for k := 0; k < spans.Len(); k++ {
					one := ptrace.NewTraces()
					nrs := one.ResourceSpans().AppendEmpty()
					rs.Resource().CopyTo(nrs.Resource())
					spans.At(k).CopyTo(nrs.ScopeSpans().AppendEmpty().Spans().AppendEmpty())
					b, _ := (&ptrace.JSONMarshaler{}).MarshalTraces(one)
					out[spans.At(k).SpanID().String()] = string(b)
				}
			}
		}
	}
	return out
}

func post(t *testing.T, url, token, file string) int {
	t.Helper()
	body, err := os.ReadFile(file)
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	return resp.StatusCode
}

func readCases(t *testing.T, root string) []replaycase.Case {
	var out []replaycase.Case
	files, _ := filepath.Glob(filepath.Join(root, "cases", "dt=*", "*.parquet"))
	for _, f := range files {
		rows, err := parquet.ReadFile[replaycase.Case](f)
		require.NoError(t, err)
		out = append(out, rows...)
	}
	return out
}

func TestFanOutToBackendAndReplayCases(t *testing.T) {
	be := newBackend(t)
	config, err := os.ReadFile(filepath.Join(testcollector.RepoRoot(), "config", "gateway.yaml"))
	require.NoError(t, err)
	httpPort, dataDir := testcollector.FreePort(t), t.TempDir()
	const token = "agents-secret-token"
	env := []string{
		"AGENT_TOKEN=" + token,
		"TRACE_BACKEND_ENDPOINT=" + be.URL,
		fmt.Sprintf("OTLP_HTTP_ENDPOINT=127.0.0.1:%d", httpPort),
		fmt.Sprintf("OTLP_GRPC_ENDPOINT=127.0.0.1:%d", testcollector.FreePort(t)),
		fmt.Sprintf("HEALTH_CHECK_ENDPOINT=127.0.0.1:%d", testcollector.FreePort(t)),
		fmt.Sprintf("REPLAY_ENDPOINT=127.0.0.1:%d", testcollector.FreePort(t)),
		"TELEMETRY_HOST=127.0.0.1",
		fmt.Sprintf("TELEMETRY_PORT=%d", testcollector.FreePort(t)),
		"REPRISE_STATE_DIR=" + t.TempDir(),
		"REPRISE_DATA_DIR=" + dataDir,
	}
	gw := testcollector.Launch(t, binary, string(config), env, httpPort)
	otlp := fmt.Sprintf("http://127.0.0.1:%d", httpPort)
	run := filepath.Join(testfixtures.Dir(), testfixtures.OTelEvents)

	assert.Equal(t, http.StatusUnauthorized, post(t, otlp+"/v1/traces", "", filepath.Join(run, "traces.json")),
		"an agent without the token is refused")
	require.Equal(t, http.StatusOK, post(t, otlp+"/v1/logs", token, filepath.Join(run, "logs.json")))
	require.Equal(t, http.StatusOK, post(t, otlp+"/v1/traces", token, filepath.Join(run, "traces.json")))

	// The backend receives every original span, unchanged, and every log record.
	want := spansByID(testfixtures.Traces(t, testfixtures.OTelEvents))
	require.NotEmpty(t, want)
	wantLogs := testfixtures.Logs(t, testfixtures.OTelEvents).LogRecordCount()
	require.Eventually(t, func() bool { return len(be.spans()) >= len(want) && be.logRecords() >= wantLogs },
		20*time.Second, 100*time.Millisecond, "backend got %d of %d spans:\n%s", len(be.spans()), len(want), gw.Output)
	got := be.spans()
	require.Len(t, got, len(want))
	for id, span := range want {
		assert.JSONEq(t, span, got[id], "span %s reached the backend changed", id)
	}
	assert.Equal(t, wantLogs, be.logRecords())

	// The dataset receives the run as one accepted case.
	var cases []replaycase.Case
	require.Eventually(t, func() bool { cases = readCases(t, dataDir); return len(cases) > 0 },
		30*time.Second, 200*time.Millisecond, "no case written:\n%s", gw.Output)
	require.Len(t, cases, 1)
	assert.Equal(t, replaycase.StatusAccepted, cases[0].Status, "%v", cases[0].Reasons)
	assert.Equal(t, "weather-bot", cases[0].AgentName)
	assert.Len(t, cases[0].Steps, 4)
}

// The distribution lists Reprise's `env` provider (confmap/provider/strictenvprovider), as the
// reprise binary does: config/gateway.yaml started without AGENT_TOKEN, which has no default,
// stops with an error naming the variable. With upstream's envprovider the variable expanded to
// "" and the error named a component instead ("bearertokenauth/agents: no bearer token
// provided"); a variable no component checks was started with "".
func TestTheGatewayRefusesAnUnsetTokenVariable(t *testing.T) {
	config := filepath.Join(testcollector.RepoRoot(), "config", "gateway.yaml")
	cmd := exec.Command(binary, "validate", "--config", config)
	cmd.Dir = t.TempDir()
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "TRACE_BACKEND_ENDPOINT=http://127.0.0.1:4319"}
	out, err := cmd.CombinedOutput()
	require.Error(t, err, "validated without AGENT_TOKEN:\n%s", out)
	assert.Contains(t, string(out), "environment variable AGENT_TOKEN is not set and ${env:AGENT_TOKEN} gives no default")

	cmd = exec.Command(binary, "validate", "--config", config)
	cmd.Dir = t.TempDir()
	cmd.Env = append(cmd.Env, "PATH="+os.Getenv("PATH"), "HOME="+t.TempDir(), "TRACE_BACKEND_ENDPOINT=http://127.0.0.1:4319", "AGENT_TOKEN=change-me")
	out, err = cmd.CombinedOutput()
	assert.NoError(t, err, "the same config with the token set:\n%s", out)
}
