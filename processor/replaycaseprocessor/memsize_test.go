package replaycaseprocessor

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/internal/testfixtures"
)

func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// The estimate must not be below the heap the telemetry really takes (else max_buffered_bytes
// would not bound memory), nor far above it (else the limit would evict for nothing).
func TestMemSizeCoversTheHeap(t *testing.T) {
	for _, run := range []string{testfixtures.OTelEvents, testfixtures.Traceloop, testfixtures.OpenInference, testfixtures.OTelNoContent} {
		t.Run(run, func(t *testing.T) {
			const copies = 300
			tds, lds := make([]ptrace.Traces, copies), make([]plog.Logs, copies)
			before := heapInUse()
			for i := range tds {
				tds[i], lds[i] = testfixtures.Traces(t, run), testfixtures.Logs(t, run)
			}
			held := float64(heapInUse()-before) / copies
			est := float64(memTraces(tds[0]) + memLogs(lds[0]))
			proto := float64(otlpTracesMarshaler.TracesSize(tds[0]) + otlpLogsMarshaler.LogsSize(lds[0]))
			t.Logf("heap %.0f B/run, estimate %.0f, protobuf %.0f", held, est, proto)
			assert.GreaterOrEqual(t, est, held, "the estimate covers the heap")
			assert.LessOrEqual(t, est, 2*held, "and is not wildly above it")
			runtime.KeepAlive(tds)
			runtime.KeepAlive(lds)
		})
	}
}

// What max_buffered_bytes counts for open cases must cover the heap they really take (the
// held encodings and the buffers' bookkeeping), else the limit would not bound memory.
func TestByteAccountingCoversTheHeapOfOpenCases(t *testing.T) {
	for _, run := range []string{testfixtures.OTelEvents, testfixtures.Traceloop, testfixtures.OpenInference, testfixtures.OTelNoContent} {
		t.Run(run, func(t *testing.T) {
			const runs = 300
			h := newHarness(t, nil)
			before := heapInUse()
			for i := 0; i < runs; i++ {
				td, ld := testfixtures.Traces(t, run), testfixtures.Logs(t, run)
				testfixtures.WithTraceID(td, ld, i)
				h.sendLogs(ld)
				h.sendTraces(td)
			}
			held := float64(heapInUse()-before) / runs
			h.p.mu.Lock()
			require.Len(t, h.p.open, runs)
			accounted := float64(h.p.bytes) / runs
			h.p.mu.Unlock()
			t.Logf("heap %.0f B/open run, accounted %.0f", held, accounted)
			assert.GreaterOrEqual(t, accounted, held, "the accounting covers the heap")
			assert.LessOrEqual(t, accounted, 2*held, "and is not wildly above it")
			h.shutdown()
		})
	}
}
