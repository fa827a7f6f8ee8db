// Package testfixtures loads the real GenAI telemetry in testdata/otlp for tests.
package testfixtures

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Names of the fixture runs in testdata/otlp.
const (
	OTelEvents    = "otel-events"
	OTelNoContent = "otel-nocontent"
	Traceloop     = "traceloop"
	OpenInference = "openinference"
)

// Dir is testdata/otlp at the repository root.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata", "otlp")
}

// Traces reads <run>/traces.json.
func Traces(tb testing.TB, run string) ptrace.Traces {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(Dir(), run, "traces.json"))
	if err != nil {
		tb.Fatal(err)
	}
	td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(b)
	if err != nil {
		tb.Fatalf("%s traces: %v", run, err)
	}
	return td
}

// Logs reads <run>/logs.json, or returns empty logs when the run has none.
func Logs(tb testing.TB, run string) plog.Logs {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(Dir(), run, "logs.json"))
	if os.IsNotExist(err) {
		return plog.NewLogs()
	}
	if err != nil {
		tb.Fatal(err)
	}
	ld, err := (&plog.JSONUnmarshaler{}).UnmarshalLogs(b)
	if err != nil {
		tb.Fatalf("%s logs: %v", run, err)
	}
	return ld
}

// WithTraceID gives every span and log record of a run the trace id n, so that copies of one
// fixture become distinct runs.
func WithTraceID(td ptrace.Traces, ld plog.Logs, n int) {
	var id pcommon.TraceID
	id[0], id[1], id[2], id[15] = byte(n>>16), byte(n>>8), byte(n), 0xee
	for i := 0; i < td.ResourceSpans().Len(); i++ {
		for j := 0; j < td.ResourceSpans().At(i).ScopeSpans().Len(); j++ {
			spans := td.ResourceSpans().At(i).ScopeSpans().At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				spans.At(k).SetTraceID(id)
			}
		}
	}
	for i := 0; i < ld.ResourceLogs().Len(); i++ {
		for j := 0; j < ld.ResourceLogs().At(i).ScopeLogs().Len(); j++ {
			lrs := ld.ResourceLogs().At(i).ScopeLogs().At(j).LogRecords()
			for k := 0; k < lrs.Len(); k++ {
				lrs.At(k).SetTraceID(id)
			}
		}
	}
}
