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

	"github.com/reprise-dev/reprise/replaycase"
)

// storedMarkIDBytes sums the bytes of span ids and event keys the closed marks in a
// file_storage directory hold, read as the processor reads them on start.
func storedMarkIDBytes(t *testing.T, dir string) (bytes int64, marks int) {
	t.Helper()
	host, ext := startFileStorage(t, dir)
	defer func() { require.NoError(t, ext.Shutdown(context.Background())) }()
	client, err := host.exts[storageID].(storage.Extension).GetClient(context.Background(), component.KindProcessor, component.MustNewID("replay_case"), "")
	require.NoError(t, err)
	defer func() { require.NoError(t, client.Close(context.Background())) }()
	require.NoError(t, client.(storage.Walker).Walk(context.Background(), func(key string, value []byte) ([]*storage.Operation, error) {
		if strings.HasPrefix(key, closedPrefix) {
			_, spans, events := readClosedValue(value)
			bytes += idCountOf(spans, events).bytes()
			marks++
		}
		return nil, nil
	}))
	return bytes, marks
}

// The ids the closed marks hold on disk are bounded as the memory's are: at most
// max_buffered_bytes / 16 in all, the oldest marks' ids dropped first. They were bounded only by
// the window of max_open_traces marks: 8 bytes a span (16 an event key) of each of 10,000 runs
// by default, whatever their size. The marks stay (the closes are remembered); the newest ones
// still recognise a redelivery after a restart as a duplicate.
func TestStoredClosedIDsAreBounded(t *testing.T) {
	const limit = 16 * 1000 // 1,000 bytes of ids: 125 span ids, 25 runs of 5 spans
	dir := t.TempDir()
	withStorage := func(c *Config) { c.Storage, c.Limits.MaxBufferedBytes = &storageID, limit }
	first, ext := startWithStorage(t, dir, withStorage)
	const runs = 60
	for n := 1; n <= runs; n++ {
		first.sendTraces(oneRun(t, n))
		first.advance(3 * time.Second)
	}
	require.Len(t, first.cases(), runs)
	first.shutdown()
	require.NoError(t, ext.Shutdown(context.Background()))
	bytes, marks := storedMarkIDBytes(t, dir)
	assert.Equal(t, runs, marks, "every close is still stored")
	assert.LessOrEqual(t, bytes, int64(limit/closedIDsShare), "the ids on disk stay within the budget")
	assert.Greater(t, bytes, int64(limit/closedIDsShare)-5*memClosedID, "no more were dropped than the budget asks")

	second, ext := startWithStorage(t, dir, withStorage)
	second.sendTraces(oneRun(t, runs)) // the newest close kept its ids: a duplicate
	second.advance(time.Hour)
	assert.Empty(t, second.cases())
	second.sendTraces(oneRun(t, 1)) // the oldest close lost its ids: a late fragment, as documented
	second.advance(time.Hour)
	second.shutdown()
	require.NoError(t, ext.Shutdown(context.Background()))
	cases := second.cases()
	require.Len(t, cases, 1)
	assert.True(t, cases[0].HasReason(replaycase.ReasonLateSpans), "%v", reasonCodes(cases[0]))
	bytes, _ = storedMarkIDBytes(t, dir)
	assert.LessOrEqual(t, bytes, int64(limit/closedIDsShare), "still within the budget after the restart")
}
