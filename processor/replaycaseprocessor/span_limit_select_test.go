package replaycaseprocessor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/processor/replaycaseprocessor/internal/metadatatest"
	"github.com/reprise-dev/reprise/replaycase"
)

// A run cut at max_spans_per_trace is selected once, on its first part, and its later parts
// keep that selection. After a kill -9 between the parts, the part that continues is restored
// from storage: it must still be kept for the reason its run was, not judged on its own spans
// (which no rule matches here) and dropped.
func TestRestartAfterASpanLimitPartKeepsTheRunsSelection(t *testing.T) {
	configure := func(c *Config) {
		c.Limits.MaxSpansPerTrace = 3 // Traceloop's 5 spans: retrieval, tool, root | chat, chat
		c.Select = &SelectConfig{Rules: map[string]string{"tools": `span.name == "execute_tool get_weather"`}, Unselected: unselectedDrop}
	}
	reference := newHarness(t, configure) // the same run without a crash
	reference.sendTraces(testfixtures.Traces(t, testfixtures.Traceloop))
	reference.shutdown()
	want := reference.cases()
	require.Len(t, want, 2)
	for _, c := range want {
		require.Equal(t, "tools", c.SelectedBy)
	}

	dir := t.TempDir()
	withStorage := func(c *Config) { configure(c); c.Storage = &storageID }
	first, ext := startWithStorage(t, dir, withStorage)
	first.sendTraces(testfixtures.Traces(t, testfixtures.Traceloop))
	first.advance(time.Millisecond) // sends the first part only
	require.Len(t, first.cases(), 1)
	crash(t, first, ext)

	second, ext := startWithStorage(t, dir, withStorage)
	second.advance(40 * time.Second)
	got := append(first.cases(), second.cases()...)
	require.Len(t, got, 2, "the part restored after the crash is kept, as without the crash")
	for i := range want {
		assert.Equal(t, want[i].CaseID, got[i].CaseID, "part %d", i)
		assert.Equal(t, "tools", got[i].SelectedBy, "part %d", i)
	}
	second.shutdown()
	require.NoError(t, ext.Shutdown(context.Background()))
}

// Marks written before the selection was kept (version 1) still read.
func TestVersion1ResumeMarksStillRead(t *testing.T) {
	v1 := append([]byte{1, 3, 1}, 1, 2, 3, 4, 5, 6, 7, 8)
	r := resumePoint{sent: map[pcommon.SpanID]struct{}{}}
	require.NoError(t, decodeMarker(v1, &r))
	assert.Equal(t, 3, r.fragment)
	assert.True(t, r.rootSeen)
	assert.Empty(t, r.selectedBy)
	assert.Contains(t, r.sent, pcommon.SpanID{1, 2, 3, 4, 5, 6, 7, 8})
}

// selected_runs equals the cases closed when select is set (README): the parts of a run after
// the first, kept for the reason the run was, are counted too.
func TestSelectedRunsCountEveryPartKept(t *testing.T) {
	h := newHarness(t, func(c *Config) {
		c.Limits.MaxSpansPerTrace = 3
		c.Select = &SelectConfig{Rules: map[string]string{"tools": `span.name == "execute_tool get_weather"`}, Unselected: unselectedDrop}
	})
	h.sendTraces(testfixtures.Traces(t, testfixtures.Traceloop))
	h.advance(3 * time.Second)
	late := takeSpans(testfixtures.Traces(t, testfixtures.Traceloop), 1)
	h.sendTraces(withNewSpanID(late)) // a span not sent before, after the run closed: a late fragment
	h.shutdown()
	require.Len(t, h.cases(), 3)
	metadatatest.AssertEqualProcessorReplayCaseSelectedRuns(t, h.tel, []metricdata.DataPoint[int64]{
		{Value: 3, Attributes: attribute.NewSet(attribute.String("selected_by", "tools"))},
	}, metricdatatest.IgnoreTimestamp())
}

// A run cut at max_spans_per_trace is judged part by part, and its first part closes before
// the later ones arrive: here the chat spans a rule matches are in the second part. The first
// part cannot be judged on what it holds (a later span may match), so it is kept, selected_by
// span_limit, rather than dropped; the part a rule matches records the rule.
func TestSpanLimitPartIsKeptWhenALaterPartMayMatch(t *testing.T) {
	h := newHarness(t, func(c *Config) {
		c.Limits.MaxSpansPerTrace = 3 // Traceloop's 5 spans: retrieval, tool, root | chat, chat
		c.Select = &SelectConfig{Rules: map[string]string{"chats": `span.name == "chat gpt-4o-mini"`}, Unselected: unselectedDrop}
	})
	h.sendTraces(testfixtures.Traces(t, testfixtures.Traceloop))
	h.shutdown()
	cases := h.cases()
	require.Len(t, cases, 2, "both parts of the run a rule selects")
	assert.Equal(t, selectedBySpanLimit, cases[0].SelectedBy)
	assert.True(t, cases[0].HasReason(replaycase.ReasonSpanLimit))
	assert.Equal(t, "chats", cases[1].SelectedBy)
	metadatatest.AssertEqualProcessorReplayCaseSelectedRuns(t, h.tel, []metricdata.DataPoint[int64]{
		{Value: 1, Attributes: attribute.NewSet(attribute.String("selected_by", selectedBySpanLimit))},
		{Value: 1, Attributes: attribute.NewSet(attribute.String("selected_by", "chats"))},
	}, metricdatatest.IgnoreTimestamp())
}
