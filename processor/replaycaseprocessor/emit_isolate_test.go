package replaycaseprocessor

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/processor/replaycaseprocessor/internal/metadatatest"
	"github.com/reprise-dev/reprise/replaycase"
)

// pickyTraces is a next consumer whose answer to each request is decided by answer, from the
// trace ids of the cases in it, and which keeps what it accepts.
type pickyTraces struct {
	mu       sync.Mutex
	answer   func(call int, traceIDs []string) error
	calls    int
	accepted []*replaycase.Case
}

func (*pickyTraces) Capabilities() consumer.Capabilities { return consumer.Capabilities{} }

func (n *pickyTraces) ConsumeTraces(_ context.Context, td ptrace.Traces) error {
	cases, err := replaycase.Decode(td)
	if err != nil {
		return err
	}
	var ids []string
	for _, c := range cases {
		ids = append(ids, c.Provenance.TraceID)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.calls++
	if err := n.answer(n.calls, ids); err != nil {
		return err
	}
	n.accepted = append(n.accepted, cases...)
	return nil
}

// threeRuns sends three runs, traces 1 to 3, and returns their trace ids.
func threeRuns(t *testing.T, h *harness) []string {
	var ids []string
	for i := 1; i <= 3; i++ {
		td := testfixtures.Traces(t, testfixtures.Traceloop)
		testfixtures.WithTraceID(td, plog.NewLogs(), i)
		ids = append(ids, td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).TraceID().String())
		h.sendTraces(td)
	}
	return ids
}

func acceptedTraceIDs(n *pickyTraces) []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	var ids []string
	for _, c := range n.accepted {
		ids = append(ids, c.Provenance.TraceID)
	}
	return ids
}

// One case the next consumer refuses for good does not take the other cases of its batch with
// it: they are sent again one at a time, and only the refused one is dropped and logged.
func TestAPermanentRefusalDropsOnlyTheCaseRefused(t *testing.T) {
	h := newHarness(t, nil)
	logs := h.observeDropLog()
	next, ids := threeRunsOneRefused(t, h)
	h.advance(3 * time.Second) // the three close in one sweep: one batch

	assert.Equal(t, []string{ids[0], ids[2]}, acceptedTraceIDs(next))
	metadatatest.AssertEqualProcessorReplayCaseDroppedCases(t, h.tel, []metricdata.DataPoint[int64]{
		{Value: 1, Attributes: attribute.NewSet(attribute.String("reason", "permanent_downstream_error"))},
	}, metricdatatest.IgnoreTimestamp())
	dropped := logs.FilterMessage("replay case dropped").All()
	require.Len(t, dropped, 1)
	assert.Empty(t, h.p.pending)
	assert.Zero(t, h.p.bytes, "the batch was released")
	h.shutdown()
}

// A retryable refusal while the cases of a batch refused for good are sent one at a time keeps
// the cases not sent yet, and only those, for the next attempt: none is dropped, none sent twice.
func TestARetryableRefusalWhileSendingOneAtATimeKeepsTheRest(t *testing.T) {
	h := newHarness(t, nil)
	next := &pickyTraces{answer: func(call int, _ []string) error {
		switch call {
		case 1:
			return consumererror.NewPermanent(errors.New("413 Request Entity Too Large"))
		case 3:
			return errors.New("503 Service Unavailable")
		}
		return nil
	}}
	h.p.nextTraces = next
	ids := threeRuns(t, h)
	h.clock = h.clock.Add(3 * time.Second)
	require.ErrorContains(t, h.p.sweep(context.Background()), "503")
	assert.Equal(t, []string{ids[0]}, acceptedTraceIDs(next))
	require.Len(t, h.p.pending, 1)
	assert.Len(t, h.p.pending[0].caseIDs, 2)
	h.advance(time.Millisecond) // the next sweep sends what was kept
	assert.Equal(t, ids, acceptedTraceIDs(next))
	assert.Empty(t, h.p.pending)
	_, err := h.tel.GetMetric("otelcol_processor_replay_case_dropped_cases")
	assert.Error(t, err, "no case was dropped")
	h.shutdown()
}

func contains(ids []string, id string) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// threeRunsOneRefused sends three runs through h whose next consumer refuses for good every
// batch that holds the second one; it returns that consumer and the runs' trace ids.
func threeRunsOneRefused(t *testing.T, h *harness) (*pickyTraces, []string) {
	var bad string
	next := &pickyTraces{answer: func(_ int, ids []string) error {
		if contains(ids, bad) {
			return consumererror.NewPermanent(errors.New("400 Bad Request"))
		}
		return nil
	}}
	h.p.nextTraces = next
	ids := threeRuns(t, h)
	bad = ids[1]
	return next, ids
}
