package replaycaseprocessor

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/processor/replaycaseprocessor/internal/metadatatest"
)

// oneRun is the Traceloop run with trace id n.
func oneRun(t *testing.T, n int) ptrace.Traces {
	td := testfixtures.Traces(t, testfixtures.Traceloop)
	testfixtures.WithTraceID(td, plog.NewLogs(), n)
	return td
}

// sumOf is the total of an int64 sum metric over its attribute sets, 0 when it has no data.
func sumOf(t *testing.T, h *harness, name string) int64 {
	t.Helper()
	m, err := h.tel.GetMetric(name)
	if err != nil {
		return 0
	}
	var n int64
	for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
		n += dp.Value
	}
	return n
}

// Every run that became a case is counted once: in cases_closed when the next consumer took it,
// or in dropped_cases when it was refused for good. Before, a case refused for good was in both,
// and scripts/reconcile (cases_closed by status = rows written) could not balance after a drop:
// three runs, one refused, gave cases_closed 3 for 2 rows.
func TestACaseDroppedAfterItClosedIsCountedOnce(t *testing.T) {
	h := newHarness(t, nil)
	next, ids := threeRunsOneRefused(t, h)
	h.advance(3 * time.Second) // one batch: sent whole, refused, then each alone

	taken := int64(len(acceptedTraceIDs(next)))
	require.EqualValues(t, 2, taken)
	dropped := sumOf(t, h, "otelcol_processor_replay_case_dropped_cases")
	assert.EqualValues(t, 1, dropped)
	assert.Equal(t, taken, sumOf(t, h, "otelcol_processor_replay_case_cases_closed"), "cases_closed counts the cases taken, as the dataset's rows")
	assert.EqualValues(t, len(ids), sumOf(t, h, "otelcol_processor_replay_case_cases_closed")+dropped, "every run is counted once")
	h.shutdown()
}

// A batch of one case refused for good: the case is a drop, not a closed case.
func TestALoneCaseRefusedForGoodIsNotCountedClosed(t *testing.T) {
	h := newHarness(t, nil)
	h.p.nextTraces = &pickyTraces{answer: func(int, []string) error {
		return consumererror.NewPermanent(errors.New("400 Bad Request"))
	}}
	h.sendTraces(oneRun(t, 1))
	h.advance(3 * time.Second)
	assert.EqualValues(t, 1, sumOf(t, h, "otelcol_processor_replay_case_dropped_cases"))
	assert.Zero(t, sumOf(t, h, "otelcol_processor_replay_case_cases_closed"))
	h.shutdown()
}

// A case refused with a retryable error and then taken is counted once, when it is taken.
func TestACaseSentAgainIsCountedClosedOnce(t *testing.T) {
	h := newHarness(t, nil)
	h.p.nextTraces = &pickyTraces{answer: func(call int, _ []string) error {
		if call == 1 {
			return errors.New("503 Service Unavailable")
		}
		return nil
	}}
	h.sendTraces(oneRun(t, 1))
	h.clock = h.clock.Add(3 * time.Second)
	require.Error(t, h.p.sweep(context.Background()))
	assert.Zero(t, sumOf(t, h, "otelcol_processor_replay_case_cases_closed"), "not taken yet")
	h.advance(time.Millisecond)
	assert.EqualValues(t, 1, sumOf(t, h, "otelcol_processor_replay_case_cases_closed"))
	metadatatest.AssertEqualProcessorReplayCaseEmitFailures(t, h.tel, []metricdata.DataPoint[int64]{{Value: 1}}, metricdatatest.IgnoreTimestamp())
	h.shutdown()
}
