package replaycase_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/internal/pdatawalk"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/internal/testpipeline"
	"github.com/reprise-dev/reprise/replaycase"
)

// A client that sends spans with an all-zero trace id and retries the request gets one
// invalid_trace_id case per request under one case_id (the id is derived from what the request
// held). The processor emitted them in one batch, and Decode merged the cases of one id into
// one: a single row whose steps were there three times (indexes 0,0,0,1,1,1…), the other two
// cases counted in cases_closed and in no row. Each case span starts a case of its own.
func TestDecodeKeepsApartCasesThatShareACaseID(t *testing.T) {
	runs := []string{testfixtures.Traceloop, testfixtures.Traceloop, testfixtures.Traceloop}
	traces := make([]ptrace.Traces, len(runs))
	for i, run := range runs {
		traces[i] = testfixtures.Traces(t, run)
		for s := range pdatawalk.Spans(traces[i]) {
			s.Span.SetTraceID(pcommon.TraceID{})
		}
	}
	cases := testpipeline.RunTraces(t, nil, runs, traces)
	require.Len(t, cases, len(runs), "one case per request")
	for _, c := range cases {
		assert.Equal(t, cases[0].CaseID, c.CaseID, "the same request, the same id")
		assert.True(t, c.HasReason(replaycase.ReasonInvalidTraceID))
		require.Len(t, c.Steps, len(cases[0].Steps))
		for i, st := range c.Steps {
			assert.Equal(t, i, st.Index, "steps of case %s once each", c.CaseID)
		}
	}
}
