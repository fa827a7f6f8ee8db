package replaycaseprocessor

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/reprise-dev/reprise/internal/pdatawalk"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/replaycase"
)

// An agent served behind a traced caller: its top span's parent is the caller's span, in another
// service, and the SDK flags that parent remote (OTLP span flags). Consumed whole from Kafka, the
// run is not a split: such a parent is never in the run. It was counted as an orphan span, so
// every run of such an agent was marked trace_split and counted in split_traces.
func TestASpanWhoseParentIsRemoteIsNoSplit(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.IdleTimeout = 10 * time.Second })
	td := testfixtures.Traces(t, testfixtures.Traceloop)
	remote := pcommon.SpanID{0xca, 0x11, 0xe2, 0, 0, 0, 0, 1}
	n := 0
	for r := range pdatawalk.Spans(td) {
		if r.Span.ParentSpanID().IsEmpty() {
			r.Span.SetParentSpanID(remote)
			r.Span.SetFlags(pdatawalk.SpanFlagsHasIsRemote | pdatawalk.SpanFlagsIsRemote | 0x01) // parent remote, sampled
			n++
		}
	}
	require.Equal(t, 1, n)
	h.consumeTraces(fromPartition("0"), td)
	h.advance(10 * time.Second)
	require.Len(t, h.cases(), 1)
	assert.NotContains(t, reasonCodes(h.cases()[0]), replaycase.ReasonTraceSplit)
	assertNoSplit(t, h)
	h.shutdown()
}

// A parent missing without the remote flag (an SDK that does not set it, or a local parent) is
// still the mark of a cut.
func TestAMissingLocalParentIsStillASplit(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.IdleTimeout = 10 * time.Second })
	td := testfixtures.Traces(t, testfixtures.Traceloop)
	for r := range pdatawalk.Spans(td) {
		if r.Span.ParentSpanID().IsEmpty() {
			r.Span.SetParentSpanID(pcommon.SpanID{0xca, 0x11, 0xe2, 0, 0, 0, 0, 1})
			r.Span.SetFlags(pdatawalk.SpanFlagsHasIsRemote | 0x01) // parent known to be local
		}
	}
	h.consumeTraces(fromPartition("0"), td)
	h.advance(10 * time.Second)
	require.Len(t, h.cases(), 1)
	assert.Contains(t, reasonCodes(h.cases()[0]), replaycase.ReasonTraceSplit)
	assertSplitCount(t, h, splitOrphanSpans, 1)
	h.shutdown()
}
