package replaycaseprocessor

import (
	"context"
	"encoding/hex"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/processor/replaycaseprocessor/internal/metadatatest"
	"github.com/reprise-dev/reprise/replaycase"
)

// A request holding spans AND GenAI log events, redelivered after a restart (a Kafka
// redelivery, an exporter's retry): its events are the closed case's as much as its spans, so
// the redelivery adds no row. The event keys used to be hashed with a per-process seed and not
// stored, so the events came back as a late_spans fragment.
func TestRedeliveryOfEventsAfterARestartIsADuplicate(t *testing.T) {
	graceful := func(t *testing.T, h *harness, ext extension.Extension) {
		h.shutdown()
		require.NoError(t, ext.Shutdown(context.Background()))
	}
	for _, tc := range []struct {
		name    string
		stop    func(t *testing.T, h *harness, ext extension.Extension)
		newSpan bool // the redelivered request also holds a span not sent before
	}{
		{"graceful restart", graceful, false},
		{"kill -9 after the case was sent", crash, false},
		{"graceful restart, one new span", graceful, true},
		{"kill -9, one new span", crash, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			withStorage := func(c *Config) { c.Storage = &storageID }
			td, ld := testfixtures.Traces(t, testfixtures.OTelEvents), testfixtures.Logs(t, testfixtures.OTelEvents)
			spans, events := td.SpanCount(), ld.LogRecordCount()
			require.NotZero(t, events)
			retry, retryLogs := ptrace.NewTraces(), plog.NewLogs()
			td.CopyTo(retry)
			ld.CopyTo(retryLogs)
			if tc.newSpan {
				withNewSpanID(retry)
				spans--
			}

			first, ext := startWithStorage(t, dir, withStorage)
			first.sendTraces(td)
			first.sendLogs(ld)
			first.advance(3 * time.Second)
			require.Len(t, first.cases(), 1)
			tc.stop(t, first, ext)

			second, ext := startWithStorage(t, dir, withStorage)
			second.sendTraces(retry) // the redelivery
			second.sendLogs(retryLogs)
			second.advance(time.Hour)
			second.shutdown()
			require.NoError(t, ext.Shutdown(context.Background()))
			assert.Zero(t, second.logOut.LogRecordCount(), "the redelivered events are not passed on either")
			cases := second.cases()
			if tc.newSpan {
				require.Len(t, cases, 1)
				assert.True(t, cases[0].HasReason(replaycase.ReasonLateSpans), "%v", reasonCodes(cases[0]))
				assert.Equal(t, int64(1), cases[0].Provenance.SpanCount, "the new span only")
				assert.Zero(t, cases[0].Provenance.EventCount, "no event the closed case held")
			} else {
				for _, c := range cases {
					t.Errorf("the redelivery added a row: %s, reasons %v, %d spans, %d events", c.CaseID, reasonCodes(c), c.Provenance.SpanCount, c.Provenance.EventCount)
				}
			}
			metadatatest.AssertEqualProcessorReplayCaseDuplicates(t, second.tel, []metricdata.DataPoint[int64]{
				{Value: int64(spans), Attributes: closedDups("traces")},
				{Value: int64(events), Attributes: closedDups("logs")},
			}, metricdatatest.IgnoreTimestamp())
		})
	}
}

// Event keys are the same in every process: a restart compares keys computed before it with
// keys computed after it.
func TestEventKeysAreStableAcrossProcesses(t *testing.T) {
	lr := plog.NewLogRecord()
	lr.SetSpanID(pcommon.SpanID{1, 2, 3, 4, 5, 6, 7, 8})
	lr.SetTimestamp(1_700_000_000_000_000_000)
	lr.SetEventName("gen_ai.user.message")
	lr.Body().SetEmptyMap().PutStr("content", "hello")
	lr.Attributes().PutStr("gen_ai.system", "openai")
	// A key that changed between processes (or Go versions) would make every stored event key
	// miss. Computed with Python's hashlib from the bytes eventIdentity writes: the span id, the
	// timestamp and severity as uvarints, each string as its uvarint length and bytes, each value
	// as its type (uvarint) then its content, maps as their length then entries in key order.
	assert.Equal(t, "14ba8037b8dd440e23ac6d6ee5149391", hex.EncodeToString(keyBytes(eventIdentity(lr))))
}

func keyBytes(k eventKey) []byte { return k[:] }

// Marks written by the version before event keys were stored (version 2: why select kept the
// run, then the span ids) are still read: a redelivery of the spans after the restart is a
// duplicate, and a new span of the run a late fragment kept for the run's reason.
func TestVersion2ClosedMarksAreRestored(t *testing.T) {
	dir := t.TempDir()
	td := oneRun(t, 1)
	var ids []pcommon.SpanID
	forEachTestSpan(td, func(sp ptrace.Span) { ids = append(ids, sp.SpanID()) })
	// Version 2 as the code before this change wrote it (closedValue's output, captured then):
	// the version, the length of selectedBy as a uvarint, selectedBy, 8 bytes per span id.
	captured, err := hex.DecodeString("020a6572726f725f726f6f7401020304050607080909090909090909")
	require.NoError(t, err)
	by, spans, events := readClosedValue(captured)
	assert.Equal(t, "error_root", by)
	assert.Equal(t, []pcommon.SpanID{{1, 2, 3, 4, 5, 6, 7, 8}, {9, 9, 9, 9, 9, 9, 9, 9}}, spans)
	assert.Empty(t, events)

	value := []byte{2, 0}
	sorted := append([]pcommon.SpanID(nil), ids...)
	slices.SortFunc(sorted, compareSpanIDs)
	for _, id := range sorted {
		value = append(value, id[:]...)
	}
	host, ext := startFileStorage(t, dir)
	client, err := host.exts[storageID].(storage.Extension).GetClient(context.Background(), component.KindProcessor, component.MustNewID("replay_case"), "")
	require.NoError(t, err)
	id := pcommon.TraceID{2: 1, 15: 0xee} // testfixtures.WithTraceID's id for run 1
	require.NoError(t, client.Set(context.Background(), closedMark{seq: 7, id: id}.key(), value))
	require.NoError(t, client.Close(context.Background()))
	require.NoError(t, ext.Shutdown(context.Background()))

	h, ext := startWithStorage(t, dir, func(c *Config) { c.Storage = &storageID })
	h.sendTraces(oneRun(t, 1)) // the redelivery: duplicates
	h.sendTraces(withNewSpanID(oneRun(t, 1)))
	h.advance(time.Hour)
	h.shutdown()
	require.NoError(t, ext.Shutdown(context.Background()))
	cases := h.cases()
	require.Len(t, cases, 1)
	assert.True(t, cases[0].HasReason(replaycase.ReasonLateSpans), "%v", reasonCodes(cases[0]))
	assert.Equal(t, int64(1), cases[0].Provenance.SpanCount, "the new span only")
}
