package kafka

import (
	"crypto/rand"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/reprise-dev/reprise/internal/testcollector"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/replaycase"
)

// splitRun is one traceloop run sent in two requests, as an agent's exporter sends a long run:
// first the model calls and tools (children end, and are exported, first), then the root span.
type splitRun struct {
	traceID    string
	head, tail []byte // OTLP/protobuf requests
}

func makeSplitRuns(t *testing.T, n int) ([]splitRun, int) {
	runs := make([]splitRun, n)
	headSpans := 0
	for i := range runs {
		head, tail := testfixtures.Traces(t, testfixtures.Traceloop), testfixtures.Traces(t, testfixtures.Traceloop)
		var id pcommon.TraceID
		_, _ = rand.Read(id[:])
		setTraceID(head, plog.NewLogs(), id)
		setTraceID(tail, plog.NewLogs(), id)
		for _, rs := range head.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				ss.Spans().RemoveIf(func(sp ptrace.Span) bool { return sp.ParentSpanID().IsEmpty() })
			}
		}
		for _, rs := range tail.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				ss.Spans().RemoveIf(func(sp ptrace.Span) bool { return !sp.ParentSpanID().IsEmpty() })
			}
		}
		require.Equal(t, 1, tail.SpanCount())
		headSpans += head.SpanCount()
		var err error
		runs[i].traceID = id.String()
		runs[i].head, err = ptraceotlp.NewExportRequestFromTraces(head).MarshalProto()
		require.NoError(t, err)
		runs[i].tail, err = ptraceotlp.NewExportRequestFromTraces(tail).MarshalProto()
		require.NoError(t, err)
	}
	return runs, headSpans
}

// waitMembers waits until both groups are stable with n members.
func (c *cluster) waitMembers(t *testing.T, n int, timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	for {
		spans, m1 := c.assignment(t, c.group+"-spans")
		logs, m2 := c.assignment(t, c.group+"-logs")
		if m1 == n && m2 == n && spans == logs {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("groups not stable with %d members after %s: spans %q, logs %q", n, timeout, spans, logs)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// What the processor's split detection is for, on a real broker: a tier-2 collector is killed
// while it holds the first half of runs, stays away longer than session_timeout, and the
// second halves of those runs go to the other collector after the rebalance. When it comes back,
// it restores its halves from storage. Every split run is two rows with the same trace id; the
// half that shows the cut is marked trace_split and counted, and no run is lost.
func TestRebalanceSplitIsMarkedAndCounted(t *testing.T) {
	const n = 40
	// The broker's smallest session timeout, so that the group moves on quickly; a short grace
	// so that the root halves close quickly. Every head is consumed and committed before the
	// kill, so that no head is consumed twice.
	c, runs, s := headsConsumed(t, n, "REPRISE_SESSION_TIMEOUT=6s", "REPRISE_ROOT_GRACE=2s")

	victim, survivor := c.tier2[1], c.tier2[0]
	victim.kill(t)
	c.waitMembers(t, 1, time.Minute) // session_timeout passed: the survivor owns every partition
	for _, r := range runs {
		require.NoError(t, s.post("/v1/traces", r.tail))
	}
	victim.start(t)
	t.Logf("assignment after the victim's return: %s", c.waitAligned(t))
	// The restored heads close at idle_timeout (30 s): wait until every span is in a row.
	byTrace := c.waitRowsByTrace(t, 5*n)
	split, marked := 0, 0
	for _, r := range runs {
		parts := byTrace[r.traceID]
		require.NotEmpty(t, parts, "run %s has no row", r.traceID)
		ids := map[string]bool{}
		var spans int64
		for _, p := range parts {
			ids[p.CaseID] = true
			spans += p.Provenance.SpanCount
			if p.HasReason(replaycase.ReasonTraceSplit) {
				marked++
				assert.Empty(t, p.Provenance.RootSpanID, "the marked part is the one without the root")
			}
		}
		assert.Equal(t, int64(5), spans, "every span of run %s is in its rows", r.traceID)
		switch len(ids) {
		case 1:
			assert.False(t, parts[0].HasReason(replaycase.ReasonTraceSplit), "a whole run is not marked")
		case 2:
			split++
		default:
			t.Errorf("run %s is in %d parts", r.traceID, len(ids))
		}
	}
	counted := testcollector.Metric(victim.metrics, "otelcol_processor_replay_case_split_traces")
	t.Logf("split traces: %d of %d runs split by the rebalance, %d rows marked trace_split, %.0f counted by %s",
		split, n, marked, counted, victim.name)
	assert.Positive(t, split, "the victim owned a partition, so some runs were split")
	assert.Equal(t, split, marked, "one marked part per split run")
	assert.Equal(t, float64(split), counted, "the victim counted the parts it restored")
	assert.Zero(t, testcollector.Metric(survivor.metrics, "otelcol_processor_replay_case_dropped_cases"))
	for _, p := range append([]*collector{c.tier1}, c.tier2...) {
		p.stop(t)
	}
}

// headsConsumed starts a tier-1 and two tier-2 collectors (with env added) on two partitions,
// sends the heads of n split runs, and waits until they are consumed and committed. It returns
// the cluster, the runs (their tails not sent yet) and the sender.
func headsConsumed(t *testing.T, n int, env ...string) (*cluster, []splitRun, *sender) {
	t.Helper()
	c := newCluster(t, 2, 2)
	for _, p := range c.tier2 {
		p.env = append(p.env, env...)
		p.start(t)
	}
	c.tier1.start(t)
	t.Logf("assignment: %s", c.waitAligned(t))
	runs, headSpans := makeSplitRuns(t, n)
	s := &sender{url: c.otlp}
	for _, r := range runs {
		require.NoError(t, s.post("/v1/traces", r.head))
	}
	c.waitHeadsCommitted(t, headSpans)
	return c, runs, s
}

// waitHeadsCommitted waits up to a minute until the tier-2 collectors have received spans spans
// and committed every record: the heads sent are consumed, and none will be consumed twice.
func (c *cluster) waitHeadsCommitted(t *testing.T, spans int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		got := 0.0
		for _, p := range c.tier2 {
			got += testcollector.Metric(p.metrics, "otelcol_processor_replay_case_received")
		}
		if got == float64(spans) && c.lag(t) == 0 {
			return
		}
		require.True(t, time.Now().Before(deadline), "heads not consumed and committed: %v of %d spans received\n%s", got, spans, c.logs())
		time.Sleep(200 * time.Millisecond)
	}
}

// waitRowsByTrace waits up to 2 minutes until the dataset's rows hold spans spans, and returns
// the rows by trace id.
func (c *cluster) waitRowsByTrace(t *testing.T, spans int) map[string][]replaycase.Case {
	t.Helper()
	byTrace := map[string][]replaycase.Case{}
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(time.Second) {
		clear(byTrace)
		var got int64
		for _, r := range datasetRows(t, c.store) {
			byTrace[r.Provenance.TraceID] = append(byTrace[r.Provenance.TraceID], r)
			got += r.Provenance.SpanCount
		}
		if got >= int64(spans) {
			return byTrace
		}
		require.True(t, time.Now().Before(deadline), "%d of %d spans in rows after 2 min\n%s", got, spans, c.logs())
	}
}
