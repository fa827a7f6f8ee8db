package replaycaseprocessor

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/processor/replaycaseprocessor/internal/metadatatest"
)

// Without storage, a Shutdown whose deadline passes while the sweep is stuck in a send that
// ignores its cancellation still accounts for every run: the open cases and the closed ones not
// in that send are dropped, counted and logged with their case ids (they would go with the
// process), the batch in the send is logged as in flight, and its fate is counted when the send
// returns: taken, or dropped when it is refused (nothing would send it again). Before, Shutdown
// returned its error and all of them went uncounted.
func TestShutdownPastItsDeadlineWithoutStorageAccountsForEveryRun(t *testing.T) {
	for _, tc := range []struct {
		name        string
		resend      bool // the stuck send is the second offer of a batch refused once
		sendReturns error
		dropped     int64 // undeliverable_at_shutdown once the stuck send returned
		taken       int
	}{
		{"the stuck send is refused", false, errors.New("exporter queue full"), 3, 0},
		{"the stuck send is taken", false, nil, 2, 1},
		{"the stuck resend is refused", true, errors.New("exporter queue full"), 3, 0},
		{"the stuck resend is taken", true, nil, 2, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, nil)
			h.p.flushRetry = 50 * time.Millisecond
			drops := h.observeDropLog()
			core, logs := observer.New(zap.WarnLevel)
			h.p.logger = zap.New(core)
			next := &stuckTraces{Traces: h.sink, called: make(chan struct{}, 1), release: make(chan error), refuseFirst: tc.resend}
			h.p.nextTraces = next

			for i := range 3 {
				td := testfixtures.Traces(t, testfixtures.Traceloop)
				testfixtures.WithTraceID(td, plog.NewLogs(), i)
				h.sendTraces(td)
				if i == 0 {
					h.clock = h.clock.Add(time.Minute) // run 0 is due at the first sweep; 1 and 2 stay open
				}
			}
			require.NoError(t, h.p.Start(context.Background(), nil))
			select {
			case <-next.called:
			case <-time.After(10 * time.Second):
				t.Fatal("the sweeper never sent the closed case")
			}

			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			require.ErrorContains(t, h.p.Shutdown(ctx), "deadline")
			assert.Len(t, drops.FilterMessage("replay case dropped").All(), 2, "the two open runs are dropped and logged")
			inFlight := logs.FilterMessage("a batch was still being sent at the shutdown deadline; the next consumer decides its fate").All()
			require.Len(t, inFlight, 1)
			assert.Len(t, inFlight[0].ContextMap()["case_ids"], 1)

			next.release <- tc.sendReturns
			select {
			case <-h.p.done:
			case <-time.After(10 * time.Second):
				t.Fatal("the sweeper did not end once its send returned")
			}
			assert.Len(t, drops.FilterMessage("replay case dropped").All(), int(tc.dropped))
			metadatatest.AssertEqualProcessorReplayCaseDroppedCases(t, h.tel, []metricdata.DataPoint[int64]{
				{Value: tc.dropped, Attributes: attribute.NewSet(attribute.String("reason", "undeliverable_at_shutdown"))},
			}, metricdatatest.IgnoreTimestamp())
			assert.Len(t, h.cases(), tc.taken)
			h.p.mu.Lock()
			assert.Zero(t, h.p.bytes, "nothing left accounted")
			assert.Empty(t, h.p.pending, "nothing kept for a send that will not come")
			h.p.mu.Unlock()
		})
	}
}

// stuckTraces is a next consumer whose first call (the second with refuseFirst, the first
// being refused) ignores its context and returns only what release gives it (an exporter stuck
// in a write); later calls go to Traces.
type stuckTraces struct {
	consumer.Traces
	called      chan struct{}
	release     chan error
	refuseFirst bool
	stuck       bool
}

func (s *stuckTraces) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	if s.refuseFirst {
		s.refuseFirst = false
		return errors.New("exporter queue full for a moment")
	}
	if s.stuck {
		return s.Traces.ConsumeTraces(ctx, td)
	}
	s.stuck = true
	s.called <- struct{}{}
	if err := <-s.release; err != nil {
		return err
	}
	return s.Traces.ConsumeTraces(ctx, td)
}
