// Package bench compares the replay_case processor with contrib's groupbytrace processor on the
// same corpus. It is a module of its own so that groupbytrace is not a dependency of Reprise.
package bench

import (
	"context"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/processor/groupbytraceprocessor"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/processor/replaycaseprocessor"
)

const benchTraces = 1000

// corpus is benchTraces agent runs built from the four fixture recordings, each with its own
// trace id, one batch per run (traces and, where recorded, logs).
func corpus(b *testing.B) (traces []ptrace.Traces, logs []plog.Logs, spans int) {
	runs := []string{testfixtures.OTelEvents, testfixtures.Traceloop, testfixtures.OpenInference, testfixtures.OTelNoContent}
	for i := 0; i < benchTraces; i++ {
		run := runs[i%len(runs)]
		td, ld := testfixtures.Traces(b, run), testfixtures.Logs(b, run)
		testfixtures.WithTraceID(td, ld, i)
		traces, logs = append(traces, td), append(logs, ld)
		spans += td.SpanCount()
	}
	return traces, logs, spans
}

func clones(traces []ptrace.Traces, logs []plog.Logs) ([]ptrace.Traces, []plog.Logs) {
	td, ld := make([]ptrace.Traces, len(traces)), make([]plog.Logs, len(logs))
	for i := range traces {
		td[i], ld[i] = ptrace.NewTraces(), plog.NewLogs()
		traces[i].CopyTo(td[i])
		logs[i].CopyTo(ld[i])
	}
	return td, ld
}

// resourceSpans counts what the sink received: replay_case emits one resource per case, and
// groupbytrace releases each run's single resource unchanged.
func resourceSpans(sink *consumertest.TracesSink) int {
	n := 0
	for _, td := range sink.AllTraces() {
		n += td.ResourceSpans().Len()
	}
	return n
}

// BenchmarkSpansThroughProcessor measures spans per second from the first ConsumeTraces until
// every run has been released downstream, through each processor's public factory with its
// own timers running: replay_case (spans and log events in; buffer, normalize, judge, encode
// the canonical case; root_grace_period 1ms) and groupbytrace (spans in; buffer and release;
// wait_duration 1ms).
// Run: cd test/bench && go test -run '^$' -bench SpansThroughProcessor -benchmem -count 6 .
func BenchmarkSpansThroughProcessor(b *testing.B) {
	traces, logs, spans := corpus(b)

	b.Run("replay_case", func(b *testing.B) {
		f := replaycaseprocessor.NewFactory()
		cfg := f.CreateDefaultConfig().(*replaycaseprocessor.Config)
		cfg.RootGracePeriod = time.Millisecond
		cfg.Limits.MaxOpenTraces = 2 * benchTraces
		run(b, f, cfg, traces, logs, spans)
	})
	b.Run("groupbytrace", func(b *testing.B) {
		f := groupbytraceprocessor.NewFactory()
		cfg := f.CreateDefaultConfig().(*groupbytraceprocessor.Config)
		cfg.WaitDuration = time.Millisecond
		run(b, f, cfg, traces, nil, spans)
	})
}

func run(b *testing.B, f processor.Factory, cfg component.Config, traces []ptrace.Traces, logs []plog.Logs, spans int) {
	ctx := context.Background()
	set := processortest.NewNopSettings(f.Type())
	sink := new(consumertest.TracesSink)
	tp, err := f.CreateTraces(ctx, set, cfg, sink)
	require.NoError(b, err)
	require.NoError(b, tp.Start(ctx, componenttest.NewNopHost()))
	var lp processor.Logs
	if logs != nil {
		lp, err = f.CreateLogs(ctx, set, cfg, consumertest.NewNop())
		require.NoError(b, err)
		require.NoError(b, lp.Start(ctx, componenttest.NewNopHost()))
	}
	if logs == nil {
		logs = make([]plog.Logs, len(traces))
		for i := range logs {
			logs[i] = plog.NewLogs()
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		td, ld := clones(traces, logs)
		sink.Reset()
		b.StartTimer()
		for j := range td {
			if lp != nil && ld[j].LogRecordCount() > 0 {
				require.NoError(b, lp.ConsumeLogs(ctx, ld[j]))
			}
			require.NoError(b, tp.ConsumeTraces(ctx, td[j]))
		}
		for resourceSpans(sink) < len(td) {
			time.Sleep(100 * time.Microsecond)
		}
	}
	b.ReportMetric(float64(spans*b.N)/b.Elapsed().Seconds(), "spans/s")
	require.NoError(b, tp.Shutdown(ctx))
	if lp != nil {
		require.NoError(b, lp.Shutdown(ctx))
	}
}
