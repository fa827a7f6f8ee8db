package replaycaseprocessor

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/processor/replaycaseprocessor/internal/metadatatest"
)

// Parts added one by one come back as one Traces (Logs) holding every part's resources in the
// order they were added, equal to the telemetry given.
func TestHeldTelemetryRestoresEveryPartInOrder(t *testing.T) {
	for _, run := range []string{testfixtures.OTelEvents, testfixtures.Traceloop, testfixtures.OpenInference} {
		t.Run(run, func(t *testing.T) {
			td, ld := testfixtures.Traces(t, run), testfixtures.Logs(t, run)
			var h heldTelemetry
			for _, part := range spanParts(td) {
				h.addTraces(part, nil)
			}
			for _, part := range logParts(ld) {
				h.addLogs(part, nil)
			}
			require.Greater(t, len(h.spans), 1, "the fixture is split into several parts")
			got, err := h.decode()
			require.NoError(t, err)
			assert.Equal(t, protoOfTraces(t, spansOneByOne(td)), protoOfTraces(t, got.spans))
			assert.Equal(t, protoOfLogs(t, ld), protoOfLogs(t, got.events))
			assert.Nil(t, h.spans, "decode empties the buffer")
			assert.Nil(t, h.events)
		})
	}
}

// Decoding reuses one scratch buffer for the decompressed encoding: what a decode returned must
// not change when later decodes, of other runs, overwrite that buffer.
func TestHeldTelemetryDecodedOwnsItsData(t *testing.T) {
	decode := func(run string) runTelemetry {
		var h heldTelemetry
		for _, part := range spanParts(testfixtures.Traces(t, run)) {
			h.addTraces(part, nil)
		}
		for _, part := range logParts(testfixtures.Logs(t, run)) {
			h.addLogs(part, nil)
		}
		got, err := h.decode()
		require.NoError(t, err)
		return got
	}
	first := decode(testfixtures.OTelEvents)
	wantSpans, wantEvents := protoOfTraces(t, first.spans), protoOfLogs(t, first.events)
	for range 20 { // sync.Pool hands the buffer back on this goroutine, unless a GC empties it
		decode(testfixtures.Traceloop)
		decode(testfixtures.OpenInference)
	}
	assert.Equal(t, wantSpans, protoOfTraces(t, first.spans))
	assert.Equal(t, wantEvents, protoOfLogs(t, first.events))
}

// A part that could not be encoded makes decode fail, naming the cause, even when later parts
// were held: the run would be incomplete.
func TestHeldTelemetryReportsAPartItCouldNotEncode(t *testing.T) {
	var h heldTelemetry
	td := testfixtures.Traces(t, testfixtures.Traceloop)
	h.addTraces(td, nil)
	assert.Zero(t, h.add(&h.spans, nil, errors.New("marshaler out of order")))
	h.addTraces(td, nil)
	_, err := h.decode()
	require.ErrorContains(t, err, "marshaler out of order")
	assert.NoError(t, h.err, "decode empties the buffer")
}

// spanParts splits td into one Traces per span, each with its resource and scope, the way
// several requests would bring a run's spans.
func spanParts(td ptrace.Traces) []ptrace.Traces {
	var parts []ptrace.Traces
	forEachScopeSpans(td, func(ss ptrace.ScopeSpans) {
		for i := 0; i < ss.Spans().Len(); i++ {
			part := ptrace.NewTraces()
			rs := part.ResourceSpans().AppendEmpty()
			// forEachScopeSpans gives no resource: the fixtures hold one resource per trace.
			td.ResourceSpans().At(0).Resource().CopyTo(rs.Resource())
			out := rs.ScopeSpans().AppendEmpty()
			ss.Scope().CopyTo(out.Scope())
			ss.Spans().At(i).CopyTo(out.Spans().AppendEmpty())
			parts = append(parts, part)
		}
	})
	return parts
}

// spansOneByOne is the concatenation of spanParts: what decoding the parts must give.
func spansOneByOne(td ptrace.Traces) ptrace.Traces {
	out := ptrace.NewTraces()
	for _, part := range spanParts(td) {
		part.ResourceSpans().MoveAndAppendTo(out.ResourceSpans())
	}
	return out
}

func logParts(ld plog.Logs) []plog.Logs {
	var parts []plog.Logs
	for i := 0; i < ld.ResourceLogs().Len(); i++ {
		part := plog.NewLogs()
		ld.ResourceLogs().At(i).CopyTo(part.ResourceLogs().AppendEmpty())
		parts = append(parts, part)
	}
	return parts
}

func protoOfTraces(t *testing.T, td ptrace.Traces) []byte {
	b, err := otlpTracesMarshaler.MarshalTraces(td)
	require.NoError(t, err)
	return b
}

func protoOfLogs(t *testing.T, ld plog.Logs) []byte {
	b, err := otlpLogsMarshaler.MarshalLogs(ld)
	require.NoError(t, err)
	return b
}

// A buffer whose held encoding no longer decodes (a defect, since the processor wrote it) is
// not lost unseen: it is counted as a dropped case with reason decode_error and logged with
// its trace id, the other runs are built as usual, and its memory is released.
func TestUndecodableBufferIsDroppedCountedAndLogged(t *testing.T) {
	h := newHarness(t, nil)
	logs := h.observeDropLog()
	for i := 0; i < 2; i++ {
		td := testfixtures.Traces(t, testfixtures.Traceloop)
		testfixtures.WithTraceID(td, plog.NewLogs(), i)
		h.sendTraces(td)
	}
	h.p.mu.Lock()
	require.Len(t, h.p.open, 2)
	broken := h.p.order.Front().Value.(*traceBuffer)
	// Cut the first part short: its last field now runs past the end of the message.
	enc := broken.held.spans[0]
	broken.held.spans[0] = enc[:len(enc)-1]
	h.p.mu.Unlock()

	h.advance(3 * time.Second)
	require.Len(t, h.cases(), 1, "the other run is built as usual")
	dropped := logs.FilterMessage("replay case dropped").All()
	require.Len(t, dropped, 1)
	assert.Equal(t, "decode_error", dropped[0].ContextMap()["reason"])
	assert.Equal(t, broken.id.String(), dropped[0].ContextMap()["trace_id"])
	assert.NotEmpty(t, dropped[0].ContextMap()["error"])
	metadatatest.AssertEqualProcessorReplayCaseDroppedCases(t, h.tel, []metricdata.DataPoint[int64]{
		{Value: 1, Attributes: attribute.NewSet(attribute.String("reason", "decode_error"))},
	}, metricdatatest.IgnoreTimestamp())
	h.shutdown()
	assert.Zero(t, h.p.bytes, "the dropped buffer's memory is released")
}

// An open case is accounted at the heap its compressed encoding and bookkeeping take, well
// under its pdata, and nothing is left accounted once its case is sent.
func TestOpenCasesAreAccountedAtTheirEncoding(t *testing.T) {
	h := newHarness(t, nil)
	td, ld := testfixtures.Traces(t, testfixtures.OTelEvents), testfixtures.Logs(t, testfixtures.OTelEvents)
	proto := int64(otlpTracesMarshaler.TracesSize(td) + otlpLogsMarshaler.LogsSize(ld))
	pdata := memTraces(td) + memLogs(ld)
	items := int64(td.SpanCount() + ld.LogRecordCount())
	h.sendLogs(ld)
	h.sendTraces(td)
	h.p.mu.Lock()
	b := h.p.open[h.p.order.Front().Value.(*traceBuffer).id]
	held := int64(0)
	for _, part := range append(append([][]byte(nil), b.held.spans...), b.held.events...) {
		held += int64(cap(part))
	}
	open := h.p.bytes
	h.p.mu.Unlock()
	t.Logf("protobuf %d B, held %d B, accounted %d B, pdata estimate %d B", proto, held, open, pdata)
	assert.Less(t, held, proto, "the encoding is held compressed")
	assert.GreaterOrEqual(t, open, memOpenBuffer+held+items*memSeenItem)
	assert.Less(t, open, pdata/2, "an open case is accounted well under its pdata")
	require.NoError(t, h.p.sweep(context.Background()))
	h.shutdown()
	require.Len(t, h.cases(), 1)
	assert.Zero(t, h.p.bytes)
}
