package replaycaseprocessor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/reprise-dev/reprise/internal/pdatawalk"
	"github.com/reprise-dev/reprise/internal/testpipeline/corpus"
)

const benchTraces = 1000

// cloneTraces and cloneLogs decode each run from its OTLP protobuf, as the OTLP receiver does:
// a copy made with CopyTo would share its strings with the corpus, and the heap the processor
// holds would look smaller than a receiver's data makes it.
func cloneTraces(tb testing.TB, in []ptrace.Traces) []ptrace.Traces {
	out := make([]ptrace.Traces, len(in))
	for i, td := range in {
		enc, err := otlpTracesMarshaler.MarshalTraces(td)
		require.NoError(tb, err)
		out[i], err = (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(enc)
		require.NoError(tb, err)
	}
	return out
}

// retrace gives the runs of iteration i trace ids of their own: the same runs sent again are
// duplicates of the cases closed in the iteration before (closed_spans.go), not new runs.
func retrace(td []ptrace.Traces, ld []plog.Logs, i int) {
	next := func(id pcommon.TraceID) pcommon.TraceID {
		if id.IsEmpty() {
			return id
		}
		id[8], id[9], id[10], id[11] = id[8]^byte(i>>24), id[9]^byte(i>>16), id[10]^byte(i>>8), id[11]^byte(i)
		return id
	}
	for _, t := range td {
		for sp := range pdatawalk.Spans(t) {
			sp.Span.SetTraceID(next(sp.Span.TraceID()))
		}
	}
	for _, l := range ld {
		pdatawalk.RemoveLogRecordsIf(l, func(r pdatawalk.LogRecord) bool {
			r.Record.SetTraceID(next(r.Record.TraceID()))
			return false
		})
	}
}

func cloneLogs(tb testing.TB, in []plog.Logs) []plog.Logs {
	out := make([]plog.Logs, len(in))
	for i, ld := range in {
		enc, err := otlpLogsMarshaler.MarshalLogs(ld)
		require.NoError(tb, err)
		out[i], err = (&plog.ProtoUnmarshaler{}).UnmarshalLogs(enc)
		require.NoError(tb, err)
	}
	return out
}

// BenchmarkSpansThroughProcessor measures spans per second from ConsumeTraces until every
// case has been emitted (buffer, normalize, judge, encode the canonical case), with the clock
// advanced by the benchmark instead of the sweeper's timers, and the live heap (after a GC)
// the open runs hold before they close (open-heap-B/run). The comparison with contrib's
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
		// With write-ahead storage, as config/local.yaml runs it: every request stored before
		// it is acknowledged, every case's records deleted once it is emitted.
		{"replay_case_storage", func(c *Config) { c.Storage = &storageID }},
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
	if cfg.Storage != nil {
		host, ext := startFileStorage(b, b.TempDir())
		defer func() { require.NoError(b, ext.Shutdown(ctx)) }()
		require.NoError(b, tp.Start(ctx, host))
	}
	var held int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		sink.Reset()
		base := heapInUse()
		td, ld := cloneTraces(b, traces), cloneLogs(b, logs)
		retrace(td, ld, i)
		b.StartTimer()
		for j := range td {
			if ld[j].LogRecordCount() > 0 {
				require.NoError(b, lp.ConsumeLogs(ctx, ld[j]))
			}
			require.NoError(b, tp.ConsumeTraces(ctx, td[j]))
		}
		b.StopTimer()
		// The live heap with every run open: what the processor holds for root_grace_period.
		td, ld = nil, nil
		held += int64(heapInUse()) - int64(base)
		b.StartTimer()
		clock = clock.Add(time.Minute)
		require.NoError(b, p.sweep(ctx))
		if sink.SpanCount() == 0 {
			b.Fatal("nothing emitted")
		}
	}
	b.ReportMetric(float64(spans*b.N)/b.Elapsed().Seconds(), "spans/s")
	b.ReportMetric(float64(held)/float64(b.N*len(traces)), "open-heap-B/run")
	require.NoError(b, tp.Shutdown(ctx))
	require.NoError(b, lp.Shutdown(ctx))
}
