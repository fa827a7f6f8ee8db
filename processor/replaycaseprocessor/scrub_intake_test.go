package replaycaseprocessor

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/klauspost/compress/s2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/replaycase"
)

// The planted secrets: an API key in a span's prompt, an e-mail address in a log event's body.
const (
	plantedKey   = "sk-proj-Xq3vT8pL2mN9rB4wK7yZ1aC5dF0gH6jE"
	plantedEmail = "jane.doe@example-corp.com"
)

// plantedRun is the OTel fixture run with plantedKey in its first span and plantedEmail in its
// first event's body.
func plantedRun(t *testing.T) (ptrace.Traces, plog.Logs) {
	td, ld := testfixtures.Traces(t, testfixtures.OTelEvents), testfixtures.Logs(t, testfixtures.OTelEvents)
	td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Attributes().PutStr("app.note", "retry with "+plantedKey)
	ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).Body().SetStr("write to " + plantedEmail)
	return td, ld
}

// wantCounts are the scrub counts of plantedRun's case.
var wantCounts = map[string]int64{"openai_api_key": 1, "email": 1}

// What the processor stores ahead is scrubbed: a secret sent in a request is not in the
// write-ahead storage (on the disk under the storage extension's directory), and the case built
// from it counts what was masked as before.
func TestTheWriteAheadCopyIsScrubbed(t *testing.T) {
	h, ext := startWithStorage(t, t.TempDir(), func(c *Config) { c.Storage = &storageID })
	td, ld := plantedRun(t)
	h.sendLogs(ld)
	h.sendTraces(td)
	recs, err := h.p.wal.records(context.Background())
	require.NoError(t, err)
	require.Len(t, recs, 2)
	var stored []byte
	for _, r := range recs {
		stored = append(stored, r.value...)
	}
	assert.False(t, bytes.Contains(stored, []byte(plantedKey)), "the API key is stored")
	assert.False(t, bytes.Contains(stored, []byte(plantedEmail)), "the e-mail address is stored")
	assert.True(t, bytes.Contains(stored, []byte("<secret:openai_api_key:")), "the API key's placeholder is stored")
	assert.True(t, bytes.Contains(stored, []byte("<secret:email:")), "the e-mail address's placeholder is stored")

	h.shutdown()
	require.NoError(t, ext.Shutdown(context.Background()))
	cases := h.cases()
	require.Len(t, cases, 1)
	assert.Equal(t, wantCounts, cases[0].Scrub.Counts)
}

// A case restored after a crash counts what was masked in it as the same case without the
// crash; so does a record an earlier version stored unscrubbed, which restore scrubs.
func TestRestoredCasesCountWhatWasMasked(t *testing.T) {
	t.Run("scrubbed before it was stored", func(t *testing.T) {
		dir := t.TempDir()
		withStorage := func(c *Config) { c.Storage = &storageID }
		first, ext := startWithStorage(t, dir, withStorage)
		td, ld := plantedRun(t)
		first.sendLogs(ld)
		first.sendTraces(td)
		crash(t, first, ext)
		second, ext := startWithStorage(t, dir, withStorage)
		second.shutdown()
		require.NoError(t, ext.Shutdown(context.Background()))
		cases := second.cases()
		require.Len(t, cases, 1)
		assert.Equal(t, wantCounts, cases[0].Scrub.Counts)
	})
	t.Run("stored unscrubbed by an earlier version", func(t *testing.T) {
		td, ld := plantedRun(t)
		spans, err := otlpTracesMarshaler.MarshalTraces(td)
		require.NoError(t, err)
		events, err := otlpLogsMarshaler.MarshalLogs(ld)
		require.NoError(t, err)
		id := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).TraceID()
		h, host, ext := withStoredRecords(t,
			storage.SetOperation(walKey(1, 'l', id, false), s2.Encode(nil, events)),
			storage.SetOperation(walKey(2, 't', id, false), s2.Encode(nil, spans)))
		require.NoError(t, h.traces.Start(context.Background(), host))
		h.advance(3 * time.Second)
		h.shutdown()
		require.NoError(t, ext.Shutdown(context.Background()))
		cases := h.cases()
		require.Len(t, cases, 1)
		assert.Equal(t, wantCounts, cases[0].Scrub.Counts)
		out, err := otlpTracesMarshaler.MarshalTraces(h.sink.AllTraces()[0])
		require.NoError(t, err)
		assert.False(t, bytes.Contains(out, []byte(plantedKey)))
		assert.Equal(t, replaycase.StatusAccepted, cases[0].Status)
	})
}

// A client's retry of a request holding a secret adds no count: only the spans kept are
// counted. Cut at the span limit, the parts of the run count what each holds, together what the
// whole run does.
func TestMaskedValuesCountOnceAcrossRetriesAndParts(t *testing.T) {
	h := newHarness(t, nil)
	td, ld := plantedRun(t)
	retry := ptrace.NewTraces()
	td.CopyTo(retry)
	h.sendLogs(ld)
	h.sendTraces(td)
	h.sendTraces(retry)
	h.shutdown()
	cases := h.cases()
	require.Len(t, cases, 1)
	assert.Equal(t, wantCounts, cases[0].Scrub.Counts)

	limited := newHarness(t, func(c *Config) { c.Limits.MaxSpansPerTrace = 2 })
	td, ld = plantedRun(t)
	limited.sendLogs(ld)
	limited.sendTraces(td)
	limited.shutdown()
	total := map[string]int64{}
	parts := limited.cases()
	require.Len(t, parts, 3)
	for _, c := range parts {
		for k, n := range c.Scrub.Counts {
			total[k] += n
		}
	}
	assert.Equal(t, wantCounts, total)
}
