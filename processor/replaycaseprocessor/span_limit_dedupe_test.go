package replaycaseprocessor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/processor/replaycaseprocessor/internal/metadatatest"
	"github.com/reprise-dev/reprise/replaycase"
)

// A client retry of a trace cut at max_spans_per_trace, while the part that continues it is
// open, counts once: the spans the closed part took are recognised as duplicates too, instead
// of being added to the open part (and cut into further parts) a second time.
func TestRetryOfATraceCutAtTheSpanLimitCountsOnce(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Limits.MaxSpansPerTrace = 3 })
	h.sendTraces(testfixtures.Traces(t, testfixtures.Traceloop)) // 5 spans: a part of 3, one of 2 open
	h.sendTraces(testfixtures.Traces(t, testfixtures.Traceloop)) // the client sends it again
	h.shutdown()
	cases := h.cases()
	require.Len(t, cases, 2, "the parts of the first delivery, no more")
	assertEachSpanOnce(t, cases, 5)
	metadatatest.AssertEqualProcessorReplayCaseDuplicates(t, h.tel, []metricdata.DataPoint[int64]{
		{Value: 3, Attributes: closedDups("traces")}, // the closed part's
		{Value: 2, Attributes: signal("traces")},     // the open part's
	}, metricdatatest.IgnoreTimestamp())
}

// After a kill -9 between the parts, the part restored still recognises the spans of the cut
// request that the parts before it took: a client retry of that request adds none of them.
func TestRetryAfterARestartBetweenSpanLimitPartsCountsOnce(t *testing.T) {
	dir := t.TempDir()
	withStorage := func(c *Config) { c.Storage, c.Limits.MaxSpansPerTrace = &storageID, 3 }
	first, ext := startWithStorage(t, dir, withStorage)
	first.sendTraces(testfixtures.Traces(t, testfixtures.Traceloop))
	first.advance(time.Millisecond) // sends the first part only
	require.Len(t, first.cases(), 1)
	crash(t, first, ext)

	second, ext := startWithStorage(t, dir, withStorage)
	second.sendTraces(testfixtures.Traces(t, testfixtures.Traceloop)) // the client sends it again
	second.shutdown()
	require.NoError(t, ext.Shutdown(context.Background()))
	cases := append(first.cases(), second.cases()...)
	require.Len(t, cases, 2, "the two parts, no more")
	assertEachSpanOnce(t, cases, 5)
}

// The span ids the resume marks named are needed during the restore only: afterwards the
// processor keeps no copy of them beside the buffers' own sets.
func TestResumedSpanIDsAreForgottenAfterTheRestore(t *testing.T) {
	dir := t.TempDir()
	withStorage := func(c *Config) { c.Storage, c.Limits.MaxSpansPerTrace = &storageID, 3 }
	first, ext := startWithStorage(t, dir, withStorage)
	first.sendTraces(testfixtures.Traces(t, testfixtures.Traceloop))
	first.advance(time.Millisecond) // sends the first part only
	crash(t, first, ext)

	second, ext := startWithStorage(t, dir, withStorage)
	require.Len(t, second.p.resumed, 1)
	for _, r := range second.p.resumed {
		assert.True(t, r.held)
		assert.Nil(t, r.sent)
	}
	second.shutdown()
	require.NoError(t, ext.Shutdown(context.Background()))
	assert.Len(t, second.cases(), 1)
}

// assertEachSpanOnce asserts that the cases hold want distinct raw spans, each in one case only.
func assertEachSpanOnce(t *testing.T, cases []*replaycase.Case, want int) {
	t.Helper()
	seen := map[string]int{}
	for _, c := range cases {
		for _, id := range rawSpanIDs(t, c) {
			seen[id]++
		}
	}
	assert.Len(t, seen, want)
	for id, n := range seen {
		assert.Equal(t, 1, n, "span %s is in %d cases", id, n)
	}
}
