package replaycaseprocessor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/klauspost/compress/s2"
	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/filestorage"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/extension/extensiontest"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/reprise-dev/reprise/internal/pdatawalk"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/processor/replaycaseprocessor/internal/metadatatest"
	"github.com/reprise-dev/reprise/replaycase"
)

// storageHost is a host with one real file_storage extension.
type storageHost struct {
	component.Host
	exts map[component.ID]component.Component
}

func (h storageHost) GetExtensions() map[component.ID]component.Component { return h.exts }

var storageID = component.MustNewID("file_storage")

func startFileStorage(t testing.TB, dir string) (storageHost, extension.Extension) {
	t.Helper()
	f := filestorage.NewFactory()
	cfg := f.CreateDefaultConfig().(*filestorage.Config)
	cfg.Directory = dir
	cfg.Compaction.Directory = dir
	require.NoError(t, cfg.Validate())
	ext, err := f.Create(context.Background(), extensiontest.NewNopSettings(f.Type()), cfg)
	require.NoError(t, err)
	require.NoError(t, ext.Start(context.Background(), componenttest.NewNopHost()))
	return storageHost{Host: componenttest.NewNopHost(), exts: map[component.ID]component.Component{storageID: ext}}, ext
}

// startWithStorage starts a file storage on dir and a new harness whose processor (configured
// by mutate, which sets its storage) writes ahead to it, as a collector does when it starts.
func startWithStorage(t *testing.T, dir string, mutate func(*Config)) (*harness, extension.Extension) {
	t.Helper()
	host, ext := startFileStorage(t, dir)
	h := newHarness(t, mutate)
	require.NoError(t, h.traces.Start(context.Background(), host))
	return h, ext
}

// crash stops a processor the way kill -9 does: nothing is flushed; only the storage file is
// closed (the kernel would release it) so that the next instance can open it.
func crash(t *testing.T, h *harness, ext extension.Extension) {
	t.Helper()
	close(h.p.stop) // the goroutine would die with the process
	<-h.p.done
	require.NoError(t, h.p.wal.close(context.Background()))
	require.NoError(t, ext.Shutdown(context.Background()))
}

// Problem 4: a run acknowledged before a crash is built and sent after the restart.
func TestAcknowledgedRunsSurviveACrash(t *testing.T) {
	dir := t.TempDir()
	withStorage := func(c *Config) { c.Storage = &storageID }

	first, ext := startWithStorage(t, dir, withStorage)
	for i := 0; i < 3; i++ {
		td, ld := testfixtures.Traces(t, testfixtures.OTelEvents), testfixtures.Logs(t, testfixtures.OTelEvents)
		testfixtures.WithTraceID(td, ld, i)
		first.sendLogs(ld)
		first.sendTraces(td)
	}
	retry := testfixtures.Traces(t, testfixtures.OTelEvents)
	testfixtures.WithTraceID(retry, plog.NewLogs(), 0)
	first.sendTraces(retry)    // a client retry of run 0: deduplicated after the restart too
	first.advance(time.Second) // inside the grace period: nothing sent yet
	require.Empty(t, first.cases())
	crash(t, first, ext)

	second, ext := startWithStorage(t, dir, withStorage)
	second.advance(3 * time.Second)
	cases := second.cases()
	require.Len(t, cases, 3, "every acknowledged run, once")
	for _, c := range cases {
		assert.Equal(t, replaycase.StatusAccepted, c.Status, "%v", c.Reasons)
		assert.Equal(t, int64(5), c.Provenance.SpanCount)
		assert.Equal(t, int64(8), c.Provenance.EventCount, "the joined log events were stored too")
	}
	second.shutdown()
	require.NoError(t, ext.Shutdown(context.Background()))

	// Everything sent was deleted: a third start restores nothing.
	third, ext := startWithStorage(t, dir, withStorage)
	third.shutdown()
	assert.Empty(t, third.cases())
	require.NoError(t, ext.Shutdown(context.Background()))
}

// A trace split over several fragments keeps its stored record until the last fragment is sent.
func TestStoredChunkSplitOverFragmentsIsKeptUntilAllAreSent(t *testing.T) {
	dir := t.TempDir()
	h, ext := startWithStorage(t, dir, func(c *Config) { c.Storage, c.Limits.MaxSpansPerTrace = &storageID, 3 })
	h.sendTraces(testfixtures.Traces(t, testfixtures.Traceloop)) // 5 spans: a full case of 3, a fragment of 2
	h.advance(time.Millisecond)                                  // sends the full case only
	require.Len(t, h.cases(), 1)
	recs, err := h.p.wal.records(context.Background())
	require.NoError(t, err)
	var kinds []byte
	for _, r := range recs {
		kinds = append(kinds, r.kind)
	}
	assert.Equal(t, []byte{'t', 'p'}, kinds, "the fragment still needs the record; the resume mark says what was sent")
	h.shutdown()
	require.NoError(t, ext.Shutdown(context.Background()))
	assert.Len(t, h.cases(), 2)
}

func TestStorageMustBeAStorageExtension(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Storage = &storageID })
	err := h.traces.Start(context.Background(), componenttest.NewNopHost())
	assert.ErrorContains(t, err, `storage: extension "file_storage" not found`)
}

// failingStorage is a storage extension whose writes fail, like a full disk.
type failingStorage struct {
	component.StartFunc
	component.ShutdownFunc
}

func (failingStorage) GetClient(context.Context, component.Kind, component.ID, string) (storage.Client, error) {
	return failingClient{}, nil
}

type failingClient struct{ storage.Client }

func (failingClient) Batch(context.Context, ...*storage.Operation) error {
	return errors.New("no space left on device")
}
func (failingClient) Walk(context.Context, storage.WalkFunc) error { return nil }
func (failingClient) Close(context.Context) error                  { return nil }

// Problem 9's processor side: what cannot be stored is not acknowledged. The client gets a
// retryable error and nothing was taken.
func TestStorageFailureRefusesTheRequest(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Storage = &storageID })
	host := storageHost{Host: componenttest.NewNopHost(), exts: map[component.ID]component.Component{storageID: failingStorage{}}}
	require.NoError(t, h.traces.Start(context.Background(), host))
	err := h.traces.ConsumeTraces(context.Background(), testfixtures.Traces(t, testfixtures.Traceloop))
	require.ErrorContains(t, err, "no space left on device")
	assert.False(t, consumererror.IsPermanent(err))
	assert.Empty(t, h.p.open)
	h.shutdown()
	assert.Empty(t, h.cases())
}

// withStoredRecords starts a file storage in a new directory holding ops in the storage of a
// new harness's processor, as an earlier process would have left them.
func withStoredRecords(t *testing.T, ops ...*storage.Operation) (*harness, storageHost, extension.Extension) {
	t.Helper()
	host, ext := startFileStorage(t, t.TempDir())
	h := newHarness(t, func(c *Config) { c.Storage = &storageID })
	client, err := ext.(storage.Extension).GetClient(context.Background(), component.KindProcessor, h.p.id, "")
	require.NoError(t, err)
	require.NoError(t, client.Batch(context.Background(), ops...))
	require.NoError(t, client.Close(context.Background()))
	return h, host, ext
}

// traceloopProtobuf is the traceloop fixture run and its OTLP protobuf.
func traceloopProtobuf(t *testing.T) (ptrace.Traces, []byte) {
	td := testfixtures.Traces(t, testfixtures.Traceloop)
	body, err := otlpTracesMarshaler.MarshalTraces(td)
	require.NoError(t, err)
	return td, body
}

// Records stored by an earlier version ("wal/<trace id>/<sequence>", the kind as the value's
// first byte) are restored, sent and deleted like the current ones.
func TestRecordsOfTheEarlierLayoutAreRestored(t *testing.T) {
	td, body := traceloopProtobuf(t)
	tid := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).TraceID()
	key := fmt.Sprintf("wal/%x/%016x", tid[:], 1)
	h, host, ext := withStoredRecords(t, storage.SetOperation(key, append([]byte{'t'}, body...)))

	require.NoError(t, h.traces.Start(context.Background(), host))
	h.advance(3 * time.Second)
	cases := h.cases()
	require.Len(t, cases, 1)
	assert.Equal(t, int64(5), cases[0].Provenance.SpanCount)
	recs, err := h.p.wal.records(context.Background())
	require.NoError(t, err)
	assert.Empty(t, recs, "deleted once sent")
	h.shutdown()
	require.NoError(t, ext.Shutdown(context.Background()))
}

// A stored record that cannot be restored (not an S2 block, not OTLP protobuf, a kind this
// build does not read) is counted by reason in dropped_stored_records and logged with its key
// and trace id on the unsampled drop logger, and left in storage; the readable ones are
// restored. Before, the first two were logged on the sampled logger only and the third was
// skipped without a trace.
func TestUnreadableStoredRecordIsCountedLoggedAndSkipped(t *testing.T) {
	_, body := traceloopProtobuf(t)
	const (
		notS2       = "wal/0000000000000001/t/00000000000000000000000000000001"
		notProtobuf = "wal/0000000000000002/l/00000000000000000000000000000002"
		unknownKind = "wal/0000000000000003/x/00000000000000000000000000000003"
		readable    = "wal/0000000000000004/t/00000000000000000000000000000004"
	)
	h, host, ext := withStoredRecords(t,
		storage.SetOperation(notS2, []byte("not an s2 block")),
		storage.SetOperation(notProtobuf, s2.Encode(nil, []byte{0x0a, 0x05, 0x01})), // a field 5 bytes long, with 1
		storage.SetOperation(unknownKind, s2.Encode(nil, body)),
		storage.SetOperation(readable, s2.Encode(nil, body)))

	logs := h.observeDropLog()
	require.NoError(t, h.traces.Start(context.Background(), host))
	h.advance(3 * time.Second)
	assert.Len(t, h.cases(), 1, "the readable record is restored")

	metadatatest.AssertEqualProcessorReplayCaseDroppedStoredRecords(t, h.tel, []metricdata.DataPoint[int64]{
		{Value: 1, Attributes: attribute.NewSet(attribute.String("reason", "decompress_error"))},
		{Value: 1, Attributes: attribute.NewSet(attribute.String("reason", "decode_error"))},
		{Value: 1, Attributes: attribute.NewSet(attribute.String("reason", "unknown_kind"))},
	}, metricdatatest.IgnoreTimestamp())
	lines := logs.FilterMessage("stored record dropped: it cannot be restored; it is left in storage").All()
	require.Len(t, lines, 3)
	got := map[string]string{}
	for _, l := range lines {
		got[l.ContextMap()["key"].(string)] = l.ContextMap()["reason"].(string) + " " + l.ContextMap()["trace_id"].(string)
	}
	assert.Equal(t, map[string]string{
		notS2:       "decompress_error 00000000000000000000000000000001",
		notProtobuf: "decode_error 00000000000000000000000000000002",
		unknownKind: "unknown_kind 00000000000000000000000000000003",
	}, got)
	recs, err := h.p.wal.records(context.Background())
	require.NoError(t, err)
	var left []string
	for _, r := range recs {
		left = append(left, r.key)
	}
	assert.ElementsMatch(t, []string{notS2, notProtobuf, unknownKind}, left, "left in storage for an operator; the restored one is deleted once sent")
	h.shutdown()
	require.NoError(t, ext.Shutdown(context.Background()))
}

// After an upgrade, records of the earlier layout are older than every record of the current
// one, so they are restored first, whatever their keys' order. Here both hold the same spans:
// the one restored second adds nothing, so its record is deleted, and the legacy one is left.
func TestRecordsOfTheEarlierLayoutComeFirst(t *testing.T) {
	_, body := traceloopProtobuf(t)
	h, host, ext := withStoredRecords(t,
		storage.SetOperation("wal/0000000000000001/t/ffffffffffffffffffffffffffffffff", s2.Encode(nil, body)),
		storage.SetOperation(fmt.Sprintf("wal/ffffffffffffffffffffffffffffffff/%016x", 9), append([]byte{'t'}, body...)))
	require.NoError(t, h.traces.Start(context.Background(), host))
	keys, err := h.p.wal.recordKeys(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []string{fmt.Sprintf("wal/ffffffffffffffffffffffffffffffff/%016x", 9)}, keys)
	recs, err := h.p.wal.records(context.Background())
	require.NoError(t, err)
	require.Len(t, recs, 1)
	assert.True(t, recs[0].legacy)
	assert.Equal(t, body, recs[0].value)
	h.shutdown()
	require.NoError(t, ext.Shutdown(context.Background()))
}

// A client that retries the same request while its trace is open adds no record per retry: a
// chunk that de-duplication empties is deleted at once.
func TestRetriesOfAnOpenTraceAddNoRecords(t *testing.T) {
	h, ext := startWithStorage(t, t.TempDir(), func(c *Config) { c.Storage = &storageID })
	for i := 0; i < 5; i++ {
		h.sendTraces(testfixtures.Traces(t, testfixtures.Traceloop))
		h.sendLogs(testfixtures.Logs(t, testfixtures.Traceloop))
	}
	keys, err := h.p.wal.recordKeys(context.Background())
	require.NoError(t, err)
	want := 1
	if testfixtures.Logs(t, testfixtures.Traceloop).LogRecordCount() > 0 {
		want = 2
	}
	assert.Len(t, keys, want, "one record per signal, whatever the retries")
	h.advance(3 * time.Second)
	require.Len(t, h.cases(), 1)
	keys, err = h.p.wal.recordKeys(context.Background())
	require.NoError(t, err)
	assert.Empty(t, keys, "all deleted once the case is sent")
	h.shutdown()
	require.NoError(t, ext.Shutdown(context.Background()))
}

// writeThenDie is a next consumer that writes what it is handed (into its sink) and dies before
// it can return: the process is killed between the exporter's durable write and the processor's
// release of the write-ahead records. It records whether the records were still stored while
// it wrote.
type writeThenDie struct {
	sink        []*replaycase.Case
	storedWhile []int
	records     func() int
}

func (w *writeThenDie) Capabilities() consumer.Capabilities { return consumer.Capabilities{} }

func (w *writeThenDie) ConsumeTraces(_ context.Context, td ptrace.Traces) error {
	w.storedWhile = append(w.storedWhile, w.records())
	cs, err := replaycase.Decode(td)
	if err != nil {
		return err
	}
	w.sink = append(w.sink, cs...)
	return errors.New("killed before returning")
}

// writtenThenKilled sends three runs to a processor writing ahead to dir, closes their cases
// and has the next consumer write them and die before it returns (the records are stored
// while it writes), and crashes the processor. It returns the cases written.
func writtenThenKilled(t *testing.T, dir string) []*replaycase.Case {
	t.Helper()
	first, ext := startWithStorage(t, dir, func(c *Config) { c.Storage = &storageID })
	next := &writeThenDie{records: func() int {
		recs, err := first.p.wal.records(context.Background())
		require.NoError(t, err)
		return len(recs)
	}}
	first.p.nextTraces = next
	for i := range 3 {
		td := testfixtures.Traces(t, testfixtures.Traceloop)
		testfixtures.WithTraceID(td, plog.NewLogs(), i)
		first.sendTraces(td)
	}
	first.clock = first.clock.Add(3 * time.Second)
	require.Error(t, first.p.sweep(context.Background()), "the hand-off did not return nil")
	require.Len(t, next.sink, 3, "the cases were written")
	assert.Equal(t, []int{3}, next.storedWhile, "their records were stored while they were written")
	for _, c := range next.sink {
		assert.False(t, c.Resent, "case %s: built from telemetry as it arrived", c.CaseID)
	}
	crash(t, first, ext)
	return next.sink
}

// The write-ahead records of a case are deleted only after the next consumer returned nil for
// it: while it writes they are stored, and a kill between its write and the release sends the
// case again after the restart, under the same case id (at least once, never lost), marked as
// possibly written before (Resent), for the exporter to write it once.
func TestKillBetweenTheWriteAndTheReleaseSendsTheCaseAgain(t *testing.T) {
	dir := t.TempDir()
	written := writtenThenKilled(t, dir)
	second, ext := startWithStorage(t, dir, func(c *Config) { c.Storage = &storageID })
	second.advance(3 * time.Second)
	again := second.cases()
	require.Len(t, again, 3, "every written case is sent again")
	ids := map[string]bool{}
	for _, c := range written {
		ids[c.CaseID] = true
	}
	for _, c := range again {
		assert.True(t, ids[c.CaseID], "case %s is sent again under the id it was written with", c.CaseID)
		assert.True(t, c.Resent, "case %s: built from stored records alone, it may have been written before the crash", c.CaseID)
	}
	recs, err := second.p.wal.records(context.Background())
	require.NoError(t, err)
	assert.Empty(t, recs, "released once the next consumer returned nil")
	second.shutdown()
	require.NoError(t, ext.Shutdown(context.Background()))
}

// Tier 2 (docs/scale-out.md) killed in the same place: Kafka delivers again the records after
// the last committed offset, which are the stored ones. They are duplicates of the restored
// case, which stays marked Resent with the span count of the copy written, so that the exporter
// finds that copy and does not write it twice (dataset.TestACaseSentAgainAfterItsQueuedCopyWasWrittenIsWrittenOnce).
func TestRecordsReadAgainAfterTheKillKeepTheCaseMarkedResent(t *testing.T) {
	dir := t.TempDir()
	written := writtenThenKilled(t, dir)
	second, ext := startWithStorage(t, dir, func(c *Config) { c.Storage = &storageID })
	for i := range 3 {
		td := testfixtures.Traces(t, testfixtures.Traceloop)
		testfixtures.WithTraceID(td, plog.NewLogs(), i)
		second.sendTraces(td) // read again from Kafka
	}
	second.advance(3 * time.Second)
	spans := map[string]int64{}
	for _, c := range written {
		spans[c.CaseID] = c.Provenance.SpanCount
	}
	again := second.cases()
	require.Len(t, again, 3, "one case a run")
	for _, c := range again {
		assert.True(t, c.Resent, "case %s: the records read again add nothing", c.CaseID)
		assert.Equal(t, spans[c.CaseID], c.Provenance.SpanCount, "case %s: as many spans as the copy written", c.CaseID)
	}
	second.shutdown()
	require.NoError(t, ext.Shutdown(context.Background()))
}

// A case open at the crash that receives a span after the restart, before it closes, holds
// more than anything written before: its case must be written, so it is not marked Resent.
// Neither is a case of telemetry that arrived after the restart alone. (A case closed and
// handed off before the crash comes back closed and Resent, and such a span is a late fragment:
// TestACaseKilledInItsHandOffComesBackClosed.)
func TestACaseThatGotASpanAfterTheRestartIsNotMarkedResent(t *testing.T) {
	dir := t.TempDir()
	first, ext := startWithStorage(t, dir, func(c *Config) { c.Storage = &storageID })
	for i := range 3 {
		td := testfixtures.Traces(t, testfixtures.Traceloop)
		testfixtures.WithTraceID(td, plog.NewLogs(), i)
		first.sendTraces(td)
	}
	crash(t, first, ext) // open: inside the root grace period
	second, ext := startWithStorage(t, dir, func(c *Config) { c.Storage = &storageID })
	late := testfixtures.Traces(t, testfixtures.Traceloop)
	testfixtures.WithTraceID(late, plog.NewLogs(), 0)
	forEachScopeSpans(late, func(ss ptrace.ScopeSpans) {
		ss.Spans().RemoveIf(func(sp ptrace.Span) bool { return sp.ParentSpanID().IsEmpty() })
		for i := 0; i < ss.Spans().Len(); i++ {
			id := ss.Spans().At(i).SpanID()
			id[0] ^= 0xff // a span the written case did not hold
			ss.Spans().At(i).SetSpanID(id)
		}
	})
	require.Positive(t, late.SpanCount())
	second.sendTraces(late)
	fresh := testfixtures.Traces(t, testfixtures.Traceloop)
	testfixtures.WithTraceID(fresh, plog.NewLogs(), 7)
	second.sendTraces(fresh)
	second.advance(3 * time.Second)
	resent := map[string]bool{}
	for _, c := range second.cases() {
		resent[c.Provenance.TraceID] = c.Resent
	}
	require.Len(t, resent, 4)
	traceID := func(i int) string {
		td := testfixtures.Traces(t, testfixtures.Traceloop)
		testfixtures.WithTraceID(td, plog.NewLogs(), i)
		return td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).TraceID().String()
	}
	assert.False(t, resent[traceID(0)], "it got a span after the restart")
	assert.True(t, resent[traceID(1)])
	assert.True(t, resent[traceID(2)])
	assert.False(t, resent[traceID(7)], "it arrived after the restart")
	second.shutdown()
	require.NoError(t, ext.Shutdown(context.Background()))
}

// FuzzWALKeyAsFormatted: walKey writes what the format it documents gives, and parseRecord
// reads the kind and the Kafka mark back from it.
func FuzzWALKeyAsFormatted(f *testing.F) {
	f.Add(uint64(0), false, []byte{1}, false)
	f.Add(uint64(math.MaxUint64), true, bytes.Repeat([]byte{0xff}, 16), true)
	f.Fuzz(func(t *testing.T, seq uint64, logs bool, idBytes []byte, fromKafka bool) {
		kind := byte('t')
		if logs {
			kind = 'l'
		}
		var id pcommon.TraceID
		copy(id[:], idBytes)
		want := fmt.Sprintf("wal/%016x/%c/%x", seq, kind, id[:])
		if fromKafka {
			want += "/kafka"
		}
		got := walKey(seq, kind, id, fromKafka)
		if got != want {
			t.Fatalf("walKey(%d, %q, %x, %v) = %q, want %q", seq, kind, id, fromKafka, got, want)
		}
		rec, ok := parseRecord(got, s2.Encode(nil, []byte("body")))
		if !ok || rec.kind != kind || rec.fromKafka != fromKafka || rec.legacy || string(rec.value) != "body" {
			t.Fatalf("parseRecord(%q) = %+v, %v", got, rec, ok)
		}
	})
}

// records reads every stored chunk, in the order restore reads them.
func (w *wal) records(ctx context.Context) ([]walRecord, error) {
	keys, err := w.recordKeys(ctx)
	if err != nil {
		return nil, err
	}
	var out []walRecord
	for _, k := range keys {
		r, ok, err := w.readRecord(ctx, k)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, r)
		}
	}
	return out, nil
}

// A crash after the first parts of a trace cut at limits.max_spans_per_trace were sent, and
// before the last was: the restart sends only the spans not sent yet, as the part they were in
// and under the case_id that part would have had. The parts share the write-ahead record of
// the request that was cut, so without the mark left when a part is sent the whole record came
// back as a new first part under the first part's case_id.
func TestRestartAfterASpanLimitPartSendsOnlyTheRest(t *testing.T) {
	for _, tc := range []struct {
		name    string
		limit   int // the fixtures hold 5 spans: parts of 3 and 2, or of 2, 2 and 1
		fixture string
		send    func(h *harness, td ptrace.Traces, ld plog.Logs)
	}{
		{"one request/3", 3, testfixtures.Traceloop, func(h *harness, td ptrace.Traces, _ plog.Logs) { h.sendTraces(td) }},
		{"one request/2", 2, testfixtures.Traceloop, func(h *harness, td ptrace.Traces, _ plog.Logs) { h.sendTraces(td) }},
		{"a request a span/3", 3, testfixtures.Traceloop, func(h *harness, td ptrace.Traces, _ plog.Logs) {
			for range td.SpanCount() {
				h.sendTraces(takeSpans(td, 1)) // the part closes on a request it takes nothing of
			}
		}},
		{"events after the spans/3", 3, testfixtures.OTelEvents, func(h *harness, td ptrace.Traces, ld plog.Logs) {
			h.sendTraces(td)
			h.sendLogs(ld) // joined to the part still open: restored after the spans
		}},
		{"events before the spans/2", 2, testfixtures.OTelEvents, func(h *harness, td ptrace.Traces, ld plog.Logs) {
			h.sendLogs(ld) // in the first part: their record goes with it
			h.sendTraces(td)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			withLimit := func(c *Config) { c.Limits.MaxSpansPerTrace = tc.limit }
			withStorage := func(c *Config) { c.Storage = &storageID; withLimit(c) }
			send := func(h *harness) {
				ld := plog.NewLogs()
				if tc.fixture == testfixtures.OTelEvents {
					ld = testfixtures.Logs(t, tc.fixture)
				}
				tc.send(h, testfixtures.Traces(t, tc.fixture), ld)
			}

			reference := newHarness(t, withLimit) // the same run without a crash
			send(reference)
			reference.shutdown()
			want := reference.cases()
			require.Len(t, want, (5+tc.limit-1)/tc.limit)

			dir := t.TempDir()
			first, ext := startWithStorage(t, dir, withStorage)
			send(first)
			first.advance(time.Millisecond) // sends the parts closed at the limit, not the last
			require.Len(t, first.cases(), len(want)-1)
			crash(t, first, ext)

			second, ext := startWithStorage(t, dir, withStorage)
			second.shutdown()
			require.NoError(t, ext.Shutdown(context.Background()))
			got := append(first.cases(), second.cases()...)
			require.Len(t, got, len(want), "each part once")
			for i := range want {
				assert.Equal(t, want[i].CaseID, got[i].CaseID, "part %d", i)
				assert.Equal(t, rawSpanIDs(t, want[i]), rawSpanIDs(t, got[i]), "part %d holds its own spans", i)
				assert.Equal(t, want[i].Provenance.EventCount, got[i].Provenance.EventCount, "part %d", i)
				assert.Equal(t, reasonCodes(want[i]), reasonCodes(got[i]), "part %d", i)
			}

			third, ext := startWithStorage(t, dir, withStorage)
			third.shutdown()
			require.NoError(t, ext.Shutdown(context.Background()))
			assert.Empty(t, third.cases(), "nothing is left in storage once the last part is sent")
		})
	}
}

// rawSpanIDs are the ids of the spans a quarantined case was built from, sorted.
func rawSpanIDs(t *testing.T, c *replaycase.Case) []string {
	t.Helper()
	td, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(c.RawSpans)
	require.NoError(t, err)
	var ids []string
	for r := range pdatawalk.Spans(td) {
		ids = append(ids, r.Span.SpanID().String())
	}
	slices.Sort(ids)
	return ids
}
