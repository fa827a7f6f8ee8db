package replaycaseprocessor

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/replaycase"
)

// A late fragment buffered when the process is killed is restored as the fragment it was, with
// the case_id it would have had without the kill, not as a first case under the run's case_id.
func TestRestoredLateFragmentKeepsItsFragmentNumber(t *testing.T) {
	head, tail := halves(t, 1)
	send := func(h *harness) {
		h.sendTraces(copyOf(head))
		h.sendTraces(copyOf(tail))
		h.advance(3 * time.Second)                // the run's case is sent
		h.sendTraces(withNewSpanID(copyOf(tail))) // a span not sent before: a late fragment, open
	}
	reference := newHarness(t, nil)
	send(reference)
	reference.shutdown()
	want := reference.cases()
	require.Len(t, want, 2)

	dir := t.TempDir()
	withStorage := func(c *Config) { c.Storage = &storageID }
	first, ext := startWithStorage(t, dir, withStorage)
	send(first)
	require.Len(t, first.cases(), 1)
	crash(t, first, ext)
	second, ext := startWithStorage(t, dir, withStorage)
	second.shutdown()
	require.NoError(t, ext.Shutdown(context.Background()))
	got := append(first.cases(), second.cases()...)
	require.Len(t, got, 2)
	assert.Equal(t, want[0].CaseID, got[0].CaseID)
	assert.Equal(t, want[1].CaseID, got[1].CaseID, "the restored fragment keeps its case_id")
	assert.NotEqual(t, got[0].CaseID, got[1].CaseID)
	assert.True(t, got[1].HasReason(replaycase.ReasonLateSpans), "%v", reasonCodes(got[1]))
}

// copyOf is a copy of td: the processor takes what it is sent.
func copyOf(td ptrace.Traces) ptrace.Traces {
	out := ptrace.NewTraces()
	td.CopyTo(out)
	return out
}

// storedCloses lists the keys of the closed marks in a file_storage directory, oldest first,
// and deletes them when del is set.
func storedCloses(t *testing.T, dir string, del ...bool) []string {
	t.Helper()
	host, ext := startFileStorage(t, dir)
	defer func() { require.NoError(t, ext.Shutdown(context.Background())) }()
	client, err := host.exts[storageID].(storage.Extension).GetClient(context.Background(), component.KindProcessor, component.MustNewID("replay_case"), "")
	require.NoError(t, err)
	defer func() { require.NoError(t, client.Close(context.Background())) }()
	var keys []string
	require.NoError(t, client.(storage.Walker).Walk(context.Background(), func(key string, _ []byte) ([]*storage.Operation, error) {
		if strings.HasPrefix(key, closedPrefix) {
			keys = append(keys, key)
		}
		return nil, nil
	}))
	if len(del) > 0 && del[0] {
		for _, k := range keys {
			require.NoError(t, client.Delete(context.Background(), k))
		}
	}
	return keys
}

// The stored memory of closes is bounded like the one in memory: the last max_open_traces
// closes; older marks are deleted as new ones are stored. A redelivery of a trace still
// remembered after the restart is a fragment; one of a trace forgotten is a first case again
// (documented in the README).
func TestStoredClosesAreBounded(t *testing.T) {
	dir := t.TempDir()
	withStorage := func(c *Config) { c.Storage, c.Limits.MaxOpenTraces = &storageID, 2 }
	first, ext := startWithStorage(t, dir, withStorage)
	var ids []string
	for n := 1; n <= 5; n++ {
		first.sendTraces(oneRun(t, n))
		first.advance(3 * time.Second)
		require.Len(t, first.cases(), n)
		ids = append(ids, first.cases()[n-1].CaseID)
	}
	first.shutdown()
	require.NoError(t, ext.Shutdown(context.Background()))
	keys := storedCloses(t, dir)
	require.Len(t, keys, 2, "only the last max_open_traces closes are stored")
	assert.True(t, strings.HasSuffix(keys[0], "000004000000000000000000000000ee"), keys[0])
	assert.True(t, strings.HasSuffix(keys[1], "000005000000000000000000000000ee"), keys[1])

	second, ext := startWithStorage(t, dir, withStorage)
	second.sendTraces(withNewSpanID(oneRun(t, 5))) // remembered: its new span is a late fragment
	second.advance(time.Hour)
	second.sendTraces(oneRun(t, 1)) // forgotten: a first case again, as documented
	second.advance(3 * time.Second)
	second.shutdown()
	require.NoError(t, ext.Shutdown(context.Background()))
	cases := second.cases()
	require.Len(t, cases, 2)
	assert.True(t, cases[0].HasReason(replaycase.ReasonLateSpans), "%v", reasonCodes(cases[0]))
	assert.NotEqual(t, ids[4], cases[0].CaseID)
	assert.Equal(t, ids[0], cases[1].CaseID)
	assert.Len(t, storedCloses(t, dir), 2, "still bounded after the restart")
}

// Storage written before the closes were stored holds resume marks and no closed marks: a
// trace cut at the span limit still resumes as the part it was, under the case_id it would
// have had (the closes the marks count are not counted twice, nor left out).
func TestResumeWithoutStoredClosesKeepsThePartNumbers(t *testing.T) {
	for _, oldStorage := range []bool{false, true} {
		withLimit := func(c *Config) { c.Limits.MaxSpansPerTrace = 2 }
		withStorage := func(c *Config) { c.Storage = &storageID; withLimit(c) }
		reference := newHarness(t, withLimit)
		reference.sendTraces(oneRun(t, 1)) // 5 spans: parts of 2, 2 and 1
		reference.shutdown()
		want := reference.cases()
		require.Len(t, want, 3)

		dir := t.TempDir()
		first, ext := startWithStorage(t, dir, withStorage)
		first.sendTraces(oneRun(t, 1))
		first.advance(time.Millisecond) // sends the two parts closed at the limit
		require.Len(t, first.cases(), 2)
		crash(t, first, ext)
		require.Len(t, storedCloses(t, dir, oldStorage), 2)

		second, ext := startWithStorage(t, dir, withStorage)
		second.shutdown()
		require.NoError(t, ext.Shutdown(context.Background()))
		got := append(first.cases(), second.cases()...)
		require.Len(t, got, 3, "old storage: %v", oldStorage)
		for i := range want {
			assert.Equal(t, want[i].CaseID, got[i].CaseID, "part %d, old storage: %v", i, oldStorage)
		}
	}
}

// A closed mark's key reads back as the mark it was written for; any other key is refused
// without a panic, and one accepted reads back the same once written again.
func FuzzClosedMarkKey(f *testing.F) {
	f.Add(uint64(1), []byte("0123456789abcdef"), "closed/0000000000000001/00000000000000000000000000000001")
	f.Add(uint64(0), []byte{}, "wal/0000000000000001/t/00000000000000000000000000000001")
	f.Fuzz(func(t *testing.T, seq uint64, idBytes []byte, key string) {
		var id pcommon.TraceID
		copy(id[:], idBytes)
		m := closedMark{seq: seq, id: id}
		if got, ok := parseClosedKey(m.key()); !ok || got != m {
			t.Fatalf("parseClosedKey(%q) = %+v, %v; want %+v", m.key(), got, ok, m)
		}
		if got, ok := parseClosedKey(key); ok {
			if again, ok := parseClosedKey(got.key()); !ok || again != got {
				t.Fatalf("%q read as %+v, written as %q, read back as %+v, %v", key, got, got.key(), again, ok)
			}
		}
	})
}

// With select, a fragment of a selected run is kept for the run's reason (it holds no root: an
// error_root rule cannot match it). After a restart too: the closed mark stores the reason.
func TestLateFragmentOfASelectedRunIsKeptAfterARestart(t *testing.T) {
	r := recordedRun(t, testfixtures.OTelEvents, 8, func(sp ptrace.Span, _ *run) {
		if isRoot(sp) {
			sp.Status().SetCode(ptrace.StatusCodeError)
		}
	})
	late := ptrace.NewTraces()
	forEachTestSpan(r.traces, func(sp ptrace.Span) {
		if !isRoot(sp) && late.SpanCount() == 0 {
			sp.CopyTo(late.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty())
			withNewSpanID(late) // not sent before: the spans sent are duplicates (closed_spans.go)
		}
	})
	dir := t.TempDir()
	withSelect := func(c *Config) { c.Storage = &storageID; selecting(0, unselectedDrop)(c) }
	first, ext := startWithStorage(t, dir, withSelect)
	first.sendTraces(r.traces)
	first.sendLogs(r.logs)
	first.advance(3 * time.Second)
	first.shutdown()
	require.NoError(t, ext.Shutdown(context.Background()))
	require.Len(t, first.cases(), 1)
	require.Equal(t, "error_root", first.cases()[0].SelectedBy)

	second, ext := startWithStorage(t, dir, withSelect)
	second.sendTraces(late) // a span of the run not sent before the restart
	second.shutdown()
	require.NoError(t, ext.Shutdown(context.Background()))
	cases := second.cases()
	require.Len(t, cases, 1, "the fragment of the selected run is kept")
	assert.Equal(t, "error_root", cases[0].SelectedBy)
	assert.True(t, cases[0].HasReason(replaycase.ReasonLateSpans), "%v", reasonCodes(cases[0]))
	assert.NotEqual(t, first.cases()[0].CaseID, cases[0].CaseID)
}
