package normalize

import (
	"fmt"
	"testing"

	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/replaycase"
)

// BenchmarkBuildManyTools builds the OpenInference fixture's case with its two model calls
// offering 0, 5 and 20 tools (testfixtures.ManyTools): an agent offers its tools on every
// call, and that instrumentation records each schema three times.
//
//	go test -run '^$' -bench BuildManyTools -benchmem ./normalize/
func BenchmarkBuildManyTools(b *testing.B) {
	logs := testfixtures.Logs(b, testfixtures.OpenInference)
	for _, n := range []int{0, 5, 20} {
		td := testfixtures.Traces(b, testfixtures.OpenInference)
		if n > 0 {
			if err := testfixtures.OfferTools(td, testfixtures.ManyTools(n)); err != nil {
				b.Fatal(err)
			}
		}
		c, findings, _ := Build(td, logs)
		if len(findings) > 0 {
			b.Fatalf("findings on the rewritten fixture: %v", findings)
		}
		for _, st := range c.Steps {
			if st.Kind == replaycase.StepLLM && n > 0 && len(st.ToolDefinitions) != n {
				b.Fatalf("a step offers %d tools, want %d", len(st.ToolDefinitions), n)
			}
		}
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Build(td, logs)
			}
		})
	}
}

// The tools testfixtures.OfferTools writes into the fixtures, as the benchmarks' corpora offer
// them, are read from each instrumentation that records tools: every model call offers all of
// them, with no finding.
func TestOfferedToolsAreRead(t *testing.T) {
	for _, run := range []string{testfixtures.OpenInference, testfixtures.Traceloop} {
		td := testfixtures.Traces(t, run)
		if err := testfixtures.OfferTools(td, testfixtures.ManyTools(5)); err != nil {
			t.Fatal(err)
		}
		c, findings, _ := Build(td, testfixtures.Logs(t, run))
		if len(findings) > 0 {
			t.Fatalf("%s: findings %v", run, findings)
		}
		calls := 0
		for _, st := range c.Steps {
			if st.Kind != replaycase.StepLLM {
				continue
			}
			calls++
			if len(st.ToolDefinitions) != 5 || st.ToolDefinitions[4].Name != "lookup_4" || len(st.ToolDefinitions[4].Parameters) < 1000 {
				t.Fatalf("%s: a model call offers %+v", run, st.ToolDefinitions)
			}
		}
		if calls != 2 {
			t.Fatalf("%s: %d model calls, want 2", run, calls)
		}
	}
}
