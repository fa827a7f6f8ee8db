package kafka

import (
	"context"
	"crypto/rand"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/internal/testcollector"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/replaycase"
)

// run is one fixture recording under a random trace id, as OTLP/protobuf request bodies.
type run struct {
	traceID string
	fixture string
	traces  []byte
	logs    []byte // nil when the fixture has no log events
}

// makeRuns alternates a spans-only fixture (traceloop) with one whose message content is in
// GenAI log events (otel-events), so that a run whose logs reached another collector than its
// spans shows up as a split.
func makeRuns(t *testing.T, n int) []run {
	fixtures := []string{testfixtures.Traceloop, testfixtures.OTelEvents}
	var templates [2]struct {
		td ptrace.Traces
		ld plog.Logs
	}
	for i, f := range fixtures {
		templates[i].td, templates[i].ld = testfixtures.Traces(t, f), testfixtures.Logs(t, f)
	}
	runs := make([]run, n)
	for i := range runs {
		k := i % len(fixtures)
		td, ld := ptrace.NewTraces(), plog.NewLogs()
		templates[k].td.CopyTo(td)
		templates[k].ld.CopyTo(ld)
		var id pcommon.TraceID
		_, _ = rand.Read(id[:])
		setTraceID(td, ld, id)
		tb, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
		require.NoError(t, err)
		runs[i] = run{traceID: id.String(), fixture: fixtures[k], traces: tb}
		if ld.LogRecordCount() > 0 {
			runs[i].logs, err = plogotlp.NewExportRequestFromLogs(ld).MarshalProto()
			require.NoError(t, err)
		}
	}
	return runs
}

func setTraceID(td ptrace.Traces, ld plog.Logs, id pcommon.TraceID) {
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, s := range ss.Spans().All() {
				s.SetTraceID(id)
			}
		}
	}
	for _, rl := range ld.ResourceLogs().All() {
		for _, sl := range rl.ScopeLogs().All() {
			for _, lr := range sl.LogRecords().All() {
				lr.SetTraceID(id)
			}
		}
	}
}

// sender posts runs to tier 1 like an OTLP exporter with retries.
type sender struct {
	url     string
	sent    atomic.Int64
	retried atomic.Int64
}

// post sends one request until tier 1 accepts it (testcollector.PostUntilAccepted).
func (s *sender) post(path string, body []byte) error {
	return testcollector.PostUntilAccepted(s.url+path, "application/x-protobuf", body, true, func(bool) { s.retried.Add(1) })
}

// send posts every run (spans, then its log events) from `clients` goroutines. It does not
// touch t, so it may run on a goroutine of its own.
func (s *sender) send(runs []run, clients int) error {
	var wg sync.WaitGroup
	var next atomic.Int64
	errs := make(chan error, clients)
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1) - 1; i < int64(len(runs)); i = next.Add(1) - 1 {
				r := runs[i]
				if err := s.post("/v1/traces", r.traces); err != nil {
					errs <- err
					return
				}
				if r.logs != nil {
					if err := s.post("/v1/logs", r.logs); err != nil {
						errs <- err
						return
					}
				}
				s.sent.Add(1)
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// datasetRows reads every row of cases/ and quarantine/ in the bucket; a file that cannot be
// read fails the test (an object is visible only once whole).
func datasetRows(t *testing.T, store *dataset.ObjectStore) []replaycase.Case {
	var out []replaycase.Case
	for _, ds := range []string{dataset.Cases, dataset.Quarantine} {
		objs, err := store.List(context.Background(), ds)
		require.NoError(t, err)
		for _, o := range objs {
			rows, err := store.ReadObjectCases(context.Background(), o)
			require.NoError(t, err, o.Key)
			out = append(out, rows...)
		}
	}
	return out
}

// waitForRuns waits until every run has a row, and returns the rows.
func waitForRuns(t *testing.T, store *dataset.ObjectStore, runs []run, timeout time.Duration, logs func() string) []replaycase.Case {
	deadline := time.Now().Add(timeout)
	for {
		rows := datasetRows(t, store)
		got := map[string]bool{}
		for _, r := range rows {
			got[r.Provenance.TraceID] = true
		}
		missing := 0
		for _, r := range runs {
			if !got[r.traceID] {
				missing++
			}
		}
		if missing == 0 {
			return rows
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d runs have no row after %s:\n%s", missing, len(runs), timeout, logs())
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// outcome is what the rows say about the runs.
type outcome struct {
	rows       int
	duplicates int      // rows repeating a case_id already seen (a case written twice)
	split      []string // trace ids with more than one distinct case_id: the trace was split
	lateEvents int      // otel-events runs whose case has no event: its log events were not joined
	splitRows  int      // rows replay_case marked trace_split (one part of a split trace)
}

// check relates every run to its rows: one case_id per trace id, how many rows repeat a
// case_id, and the GenAI log events joined into the case of their trace.
func check(rows []replaycase.Case, runs []run) outcome {
	o := outcome{rows: len(rows)}
	caseIDs := map[string]map[string]bool{}
	seen := map[string]bool{}
	events := map[string]int64{}
	for _, r := range rows {
		if seen[r.CaseID] {
			o.duplicates++
		}
		seen[r.CaseID] = true
		if caseIDs[r.Provenance.TraceID] == nil {
			caseIDs[r.Provenance.TraceID] = map[string]bool{}
		}
		caseIDs[r.Provenance.TraceID][r.CaseID] = true
		events[r.Provenance.TraceID] += r.Provenance.EventCount
		if r.HasReason(replaycase.ReasonTraceSplit) {
			o.splitRows++
		}
	}
	for _, r := range runs {
		if len(caseIDs[r.traceID]) != 1 {
			o.split = append(o.split, r.traceID)
		}
		if r.logs != nil && events[r.traceID] == 0 {
			o.lateEvents++
		}
	}
	return o
}
