// Package corpus builds the input of the processor benchmarks. It is apart from testpipeline,
// which runs the processor, so that the processor's own tests can use it too.
package corpus

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/internal/testfixtures"
)

// Runs is n agent runs built from the four fixture recordings in turn, each with its own trace
// id, as one traces batch and one logs batch per run (empty when the run records no log
// events), and the number of spans in all.
func Runs(tb testing.TB, n int) (traces []ptrace.Traces, logs []plog.Logs, spans int) {
	runs := []string{testfixtures.OTelEvents, testfixtures.Traceloop, testfixtures.OpenInference, testfixtures.OTelNoContent}
	for i := 0; i < n; i++ {
		run := runs[i%len(runs)]
		td, ld := testfixtures.Traces(tb, run), testfixtures.Logs(tb, run)
		testfixtures.WithTraceID(td, ld, i)
		traces, logs = append(traces, td), append(logs, ld)
		spans += td.SpanCount()
	}
	return traces, logs, spans
}
