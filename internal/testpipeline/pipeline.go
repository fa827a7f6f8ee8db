// Package testpipeline runs fixture runs through the replay_case processor for tests of the
// components downstream of it.
package testpipeline

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/processor/replaycaseprocessor"
	"github.com/reprise-dev/reprise/replaycase"
)

// Run sends the fixture runs (traces and log events) through a replay_case processor with its
// default config, shuts it down (which flushes every case) and returns the cases it emitted to
// next, decoded. next may be nil.
func Run(t testing.TB, next consumer.Traces, runs ...string) []*replaycase.Case {
	t.Helper()
	inputs := make([]ptrace.Traces, 0, len(runs))
	for _, run := range runs {
		inputs = append(inputs, testfixtures.Traces(t, run))
	}
	return RunTraces(t, next, runs, inputs)
}

// RunTraces is Run with the traces given. The log events still come from the named runs; they
// get the trace id of the traces given, so that they join a run whose trace id was changed.
func RunTraces(t testing.TB, next consumer.Traces, runs []string, traces []ptrace.Traces) []*replaycase.Case {
	t.Helper()
	var mu sync.Mutex
	var emitted []*replaycase.Case
	tee, err := consumer.NewTraces(func(ctx context.Context, td ptrace.Traces) error {
		cs, err := replaycase.Decode(td)
		if err != nil {
			return err
		}
		mu.Lock()
		emitted = append(emitted, cs...)
		mu.Unlock()
		if next == nil {
			return nil
		}
		return next.ConsumeTraces(ctx, td)
	})
	require.NoError(t, err)
	f := replaycaseprocessor.NewFactory()
	cfg := f.CreateDefaultConfig()
	set := processortest.NewNopSettings(f.Type())
	tp, err := f.CreateTraces(context.Background(), set, cfg, tee)
	require.NoError(t, err)
	lp, err := f.CreateLogs(context.Background(), set, cfg, consumer.Logs(nil))
	require.NoError(t, err)
	for i, run := range runs {
		if ld := testfixtures.Logs(t, run); ld.LogRecordCount() > 0 {
			setLogTraceID(ld, traces[i])
			require.NoError(t, lp.ConsumeLogs(context.Background(), ld))
		}
		require.NoError(t, tp.ConsumeTraces(context.Background(), traces[i]))
	}
	require.NoError(t, tp.Shutdown(context.Background()))
	require.NoError(t, lp.Shutdown(context.Background()))
	return emitted
}

func setLogTraceID(ld plog.Logs, td ptrace.Traces) {
	if td.SpanCount() == 0 {
		return
	}
	id := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).TraceID()
	for i := 0; i < ld.ResourceLogs().Len(); i++ {
		for j := 0; j < ld.ResourceLogs().At(i).ScopeLogs().Len(); j++ {
			lrs := ld.ResourceLogs().At(i).ScopeLogs().At(j).LogRecords()
			for k := 0; k < lrs.Len(); k++ {
				lrs.At(k).SetTraceID(id)
			}
		}
	}
}

// BigRun is the traceloop run with a 6 MiB tool result and a 6 MiB prompt of incompressible
// text. It returns the traces and the size of one large value.
func BigRun(t testing.TB) (ptrace.Traces, int) {
	td := testfixtures.Traces(t, testfixtures.Traceloop)
	blob := func() string {
		b := make([]byte, 4.5*(1<<20))
		_, _ = rand.Read(b)
		return base64.StdEncoding.EncodeToString(b)
	}
	result, prompt := blob(), blob()
	for i := 0; i < td.ResourceSpans().At(0).ScopeSpans().Len(); i++ {
		spans := td.ResourceSpans().At(0).ScopeSpans().At(i).Spans()
		for k := 0; k < spans.Len(); k++ {
			a := spans.At(k).Attributes()
			if _, ok := a.Get("gen_ai.tool.call.result"); ok {
				a.PutStr("gen_ai.tool.call.result", result)
			}
			if v, ok := a.Get("gen_ai.input.messages"); ok {
				a.PutStr("gen_ai.input.messages", strings.Replace(v.Str(), "What is the weather in Paris today?", prompt, 1))
			}
		}
	}
	return td, len(result)
}
