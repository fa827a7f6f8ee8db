package normalize

import (
	"os"
	"path/filepath"
	"testing"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/internal/testfixtures"
)

// BenchmarkBuildFixtureRuns builds the case of every recorded run once per op: the four
// fixtures of testdata/otlp and the runs recorded from real agents in testdata/node and
// testdata/python.
//
//	go test -run '^$' -bench BuildFixtureRuns -benchmem ./normalize/
func BenchmarkBuildFixtureRuns(b *testing.B) {
	type run struct {
		spans ptrace.Traces
		logs  plog.Logs
	}
	var runs []run
	for _, name := range []string{testfixtures.OTelEvents, testfixtures.OTelNoContent, testfixtures.Traceloop, testfixtures.OpenInference} {
		runs = append(runs, run{testfixtures.Traces(b, name), testfixtures.Logs(b, name)})
	}
	recorded, err := filepath.Glob("testdata/*/*/traces.json")
	if err != nil || len(recorded) == 0 {
		b.Fatal("no recorded runs", err)
	}
	for _, f := range recorded {
		raw, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(raw)
		if err != nil {
			b.Fatal(f, err)
		}
		ld := plog.NewLogs()
		if raw, err := os.ReadFile(filepath.Join(filepath.Dir(f), "logs.json")); err == nil {
			if ld, err = (&plog.JSONUnmarshaler{}).UnmarshalLogs(raw); err != nil {
				b.Fatal(f, err)
			}
		}
		runs = append(runs, run{td, ld})
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, r := range runs {
			Build(r.spans, r.logs)
		}
	}
}
