// Package testfixtures loads the real GenAI telemetry in testdata/otlp for tests.
package testfixtures

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

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
