package normalize

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// recordedRun reads a run captured from a real agent (testdata/<lang>/<run>, see the README
// there): its traces, and its log events when the instrumentation wrote any.
func recordedRun(t *testing.T, lang, run string) (ptrace.Traces, plog.Logs) {
	t.Helper()
	dir := filepath.Join("testdata", lang, run)
	b, err := os.ReadFile(filepath.Join(dir, "traces.json"))
	require.NoError(t, err)
	td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(b)
	require.NoError(t, err)
	ld := plog.NewLogs()
	if b, err := os.ReadFile(filepath.Join(dir, "logs.json")); err == nil {
		ld, err = (&plog.JSONUnmarshaler{}).UnmarshalLogs(b)
		require.NoError(t, err)
	}
	return td, ld
}
