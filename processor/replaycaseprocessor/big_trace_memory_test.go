package replaycaseprocessor

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/internal/testfixtures"
)

// bigTrace is one trace of n spans copied from the traceloop recording, with random span ids,
// in requests of perRequest spans, each decoded from its protobuf as the OTLP receiver does.
func bigTrace(t testing.TB, n, perRequest int) []ptrace.Traces {
	tmpl := testfixtures.Traces(t, testfixtures.Traceloop)
	rs := tmpl.ResourceSpans().At(0)
	var sources []ptrace.Span
	for _, ss := range rs.ScopeSpans().All() {
		for _, sp := range ss.Spans().All() {
			sources = append(sources, sp)
		}
	}
	rng := rand.New(rand.NewPCG(1, 0))
	id := func(b []byte) {
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
	}
	var traceID pcommon.TraceID
	var root pcommon.SpanID
	id(traceID[:])
	id(root[:])
	var out []ptrace.Traces
	for sent := 0; sent < n; {
		td := ptrace.NewTraces()
		rs.Resource().CopyTo(td.ResourceSpans().AppendEmpty().Resource())
		ss := td.ResourceSpans().At(0).ScopeSpans().AppendEmpty()
		for k := 0; k < perRequest && sent < n; k, sent = k+1, sent+1 {
			sp := ss.Spans().AppendEmpty()
			sources[sent%len(sources)].CopyTo(sp)
			sp.SetTraceID(traceID)
			var sid pcommon.SpanID
			id(sid[:])
			sp.SetSpanID(sid)
			sp.SetParentSpanID(root)
			if sent == 0 {
				sp.SetSpanID(root)
				sp.SetParentSpanID(pcommon.SpanID{})
			}
		}
		out = append(out, cloneTraces(t, []ptrace.Traces{td})[0])
	}
	return out
}

// heapAtSend is a next consumer that records, for each batch it is given, its spans and the
// live heap (after a GC) while it holds it.
type heapAtSend struct {
	spans []int
	heap  []uint64
}

func (*heapAtSend) Capabilities() consumer.Capabilities { return consumer.Capabilities{} }

func (h *heapAtSend) ConsumeTraces(_ context.Context, td ptrace.Traces) error {
	h.spans = append(h.spans, td.SpanCount())
	h.heap = append(h.heap, heapInUse())
	return nil
}

// The parts of a trace cut at limits.max_spans_per_trace are built and sent one at a time:
// built together, one batch held them all, decoded into case spans (~2 KB a span), while the
// next consumer decoded and wrote them again. With 20 parts of 1,000 spans and a byte limit the
// whole trace fits in, the live heap while the next consumer holds a batch was 74 MB over the
// held encodings (every part); it must stay within them plus one part: the case spans of a part
// take up to twice its pdata estimate (a span_limit part is quarantined and keeps its raw spans),
// 2.4-3.9 MB here against an estimate of 2 MB, so the bound is three estimates, 6 MB.
func TestPartsOfACutTraceAreSentOneAtATime(t *testing.T) {
	const spans, limit = 20000, 1000
	reqs := bigTrace(t, spans, limit/2)
	onePart := memTraces(reqs[0]) * 2 // the pdata estimate of max_spans_per_trace spans
	h := newHarness(t, func(c *Config) { c.Limits.MaxSpansPerTrace = limit; c.Limits.MaxBufferedBytes = 64 << 20 })
	next := &heapAtSend{}
	h.p.nextTraces = next
	for len(reqs) > 0 {
		h.sendTraces(reqs[0])
		reqs = reqs[1:]
	}
	held := heapInUse() // the open part and the closed ones, as held encodings
	h.advance(h.p.cfg.RootGracePeriod)
	require.NotEmpty(t, next.spans)
	for i := range next.spans {
		t.Logf("batch %d: %d case spans, live heap %d B over the held encodings", i, next.spans[i], int64(next.heap[i])-int64(held))
		assert.LessOrEqual(t, int64(next.heap[i])-int64(held), 3*onePart, "the heap at a send holds one part beyond the encodings")
	}
	assert.Len(t, next.spans, spans/limit, "one batch a part")
	h.shutdown()
}
