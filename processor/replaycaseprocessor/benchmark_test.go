package replaycaseprocessor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/reprise-dev/reprise/internal/testpipeline/corpus"
)

const benchTraces = 1000

func cloneTraces(in []ptrace.Traces) []ptrace.Traces {
	out := make([]ptrace.Traces, len(in))
	for i, td := range in {
		out[i] = ptrace.NewTraces()
		td.CopyTo(out[i])
	}
	return out
}

func cloneLogs(in []plog.Logs) []plog.Logs {
	out := make([]plog.Logs, len(in))
	for i, ld := range in {
		out[i] = plog.NewLogs()
		ld.CopyTo(out[i])
	}
	return out
}

// BenchmarkSpansThroughProcessor measures spans per second from ConsumeTraces until every
// case has been emitted (buffer, normalize, judge, encode the canonical case), with the clock
// advanced by the benchmark instead of the sweeper's timers. The comparison with contrib's
// groupbytrace is in test/bench.
// Run: go test -run '^$' -bench SpansThroughProcessor -benchmem -count 6 ./processor/replaycaseprocessor/
func BenchmarkSpansThroughProcessor(b *testing.B) {
	traces, logs, spans := corpus.Runs(b, benchTraces)
	for _, v := range []struct {
		name      string
		configure func(*Config)
	}{
		{"replay_case", func(*Config) {}},
		{"replay_case_scrub_off", func(c *Config) { c.Scrub.Enabled = false }},
		// Four select rules that no corpus run matches, so that each visits every span and
		// event, and a sample rate of 1 so that every run is still built and emitted: the
		// difference with replay_case is the CPU of rule evaluation.
		{"replay_case_select", func(c *Config) { c.Select = &SelectConfig{Rules: selectRules, SampleRate: 1} }},
	} {
		b.Run(v.name, func(b *testing.B) { benchReplayCase(b, traces, logs, spans, v.configure) })
	}
}

// benchReplayCase runs the corpus through replay_case with the default config changed by
// configure.
func benchReplayCase(b *testing.B, traces []ptrace.Traces, logs []plog.Logs, spans int, configure func(*Config)) {
	ctx := context.Background()
	cfg := createDefaultConfig().(*Config)
	cfg.Limits.MaxOpenTraces = 2 * benchTraces
	configure(cfg)
	sink := new(consumertest.TracesSink)
	set := processortest.NewNopSettings(processortest.NopType)
	tp, err := createTraces(ctx, set, cfg, sink)
	require.NoError(b, err)
	lp, err := createLogs(ctx, set, cfg, consumertest.NewNop())
	require.NoError(b, err)
	p := tp.(*tracesProcessor).Unwrap()
	clock := time.Unix(1_800_000_000, 0)
	p.now = func() time.Time { return clock }
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		td, ld := cloneTraces(traces), cloneLogs(logs)
		sink.Reset()
		b.StartTimer()
		for j := range td {
			if ld[j].LogRecordCount() > 0 {
				require.NoError(b, lp.ConsumeLogs(ctx, ld[j]))
			}
			require.NoError(b, tp.ConsumeTraces(ctx, td[j]))
		}
		clock = clock.Add(time.Minute)
		require.NoError(b, p.sweep(ctx))
		if sink.SpanCount() == 0 {
			b.Fatal("nothing emitted")
		}
	}
	b.ReportMetric(float64(spans*b.N)/b.Elapsed().Seconds(), "spans/s")
	require.NoError(b, tp.Shutdown(ctx))
	require.NoError(b, lp.Shutdown(ctx))
}
