package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/internal/testdataset"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/internal/testpipeline"
)

// prometheus serves the processor's counters in the Prometheus text format.
func prometheus(t *testing.T, accepted, quarantined int) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, "# TYPE otelcol_processor_replay_case_cases_closed_total counter\n")
		fmt.Fprintf(w, "otelcol_processor_replay_case_cases_closed_total{closed_by=\"root_ended\",otel_scope_name=\"x\",status=\"accepted\"} %d\n", accepted)
		fmt.Fprintf(w, "otelcol_processor_replay_case_cases_closed_total{closed_by=\"shutdown\",status=\"quarantined\"} %d\n", quarantined)
		fmt.Fprintf(w, "otelcol_processor_replay_case_dropped_cases_total{reason=\"encode_error\"} 0\n")
		fmt.Fprintf(w, "otelcol_processor_replay_case_received{signal=\"traces\"} 15\n")
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestReconcileBalancesMetricsAgainstRows(t *testing.T) {
	root := t.TempDir()
	w := testdataset.Writer(t, root, "zstd")
	cases := testpipeline.Run(t, w, testfixtures.OTelEvents, testfixtures.Traceloop, testfixtures.OTelNoContent)
	require.NoError(t, w.Shutdown(context.Background()))
	var accepted, quarantined int
	for _, c := range cases {
		if c.Status == "accepted" {
			accepted++
		} else {
			quarantined++
		}
	}
	require.Positive(t, quarantined, "the no-content run is quarantined")

	r, err := reconcile(prometheus(t, accepted, quarantined), root)
	require.NoError(t, err)
	assert.True(t, r.ok())
	assert.Equal(t, int64(accepted), r.CaseRows)
	assert.Equal(t, int64(quarantined), r.QuarantineRows)
	assert.Equal(t, 15.0, r.Received)
	var out bytes.Buffer
	r.print(&out)
	assert.Contains(t, out.String(), "OK: every closed case is a row")

	r, err = reconcile(prometheus(t, accepted+1, quarantined), root)
	require.NoError(t, err)
	assert.False(t, r.ok(), "a case closed but not written is a mismatch")
}

func TestReconcileOfAnEmptyRoot(t *testing.T) {
	r, err := reconcile(prometheus(t, 0, 0), t.TempDir())
	require.NoError(t, err)
	assert.True(t, r.ok())
}
