package replaycaseprocessor

import (
	"bytes"
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

// FuzzResumeMarkRoundTrip: a mark reads back as written; any other value either reads as a
// mark whose every sent span id it holds, or is refused, never a panic.
func FuzzResumeMarkRoundTrip(f *testing.F) {
	f.Add(uint32(1), true, "tools", []byte("12345678"), []byte{1, 1, 0})
	f.Add(uint32(math.MaxUint32), false, "", bytes.Repeat([]byte{0xff}, 24), []byte{1, 0x80})
	f.Add(uint32(0), false, "error:judge", []byte{}, []byte{2, 1, 1})
	f.Add(uint32(2), true, "", []byte{}, []byte{2, 1, 0, 0x85, 1})
	f.Fuzz(func(t *testing.T, fragment uint32, rootSeen bool, by string, raw, other []byte) {
		var ids []pcommon.SpanID
		for ; len(raw) >= 8; raw = raw[8:] {
			ids = append(ids, pcommon.SpanID(raw[:8]))
		}
		r := resumePoint{sent: map[pcommon.SpanID]struct{}{}}
		err := decodeMarker(encodeMarker(int(fragment), rootSeen, by, ids), &r)
		if fragment > 1<<31 {
			require.Error(t, err, "a fragment number past any a trace reaches")
		} else {
			require.NoError(t, err)
			assert.Equal(t, int(fragment), r.fragment)
			assert.Equal(t, rootSeen, r.rootSeen)
			assert.Equal(t, by, r.selectedBy)
			for _, id := range ids {
				assert.Contains(t, r.sent, id)
			}
			assert.LessOrEqual(t, len(r.sent), len(ids))
		}

		r = resumePoint{sent: map[pcommon.SpanID]struct{}{}}
		if decodeMarker(other, &r) == nil {
			for id := range r.sent {
				assert.True(t, bytes.Contains(other, id[:]), "span id %s is in the value", id)
			}
			assert.LessOrEqual(t, r.fragment, 1<<31)
		}
	})
}

// A resume mark whose trace has no record left (its delete failed, or the records were
// removed by hand) is deleted at start instead of being read on every start; an unreadable one
// is logged with its key.
func TestResumeMarksWithoutRecordsAreDeleted(t *testing.T) {
	id := pcommon.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	good := walKey(1, 'p', id, false)
	bad := walKey(2, 'p', pcommon.TraceID{9}, false)
	h, host, ext := withStoredRecords(t,
		storage.SetOperation(good, encodeMarker(1, true, "", []pcommon.SpanID{{1}})),
		storage.SetOperation(bad, []byte{7}))
	core, logs := observer.New(zap.ErrorLevel)
	h.p.logger = zap.New(core)
	require.NoError(t, h.traces.Start(context.Background(), host))
	assert.Equal(t, 1, logs.FilterMessageSnippet("unreadable resume mark").FilterField(zap.String("key", bad)).Len())
	recs, err := h.p.wal.records(context.Background())
	require.NoError(t, err)
	var left []string
	for _, r := range recs {
		left = append(left, r.key)
	}
	assert.Equal(t, []string{bad}, left, "the readable mark without records is gone")
	h.shutdown()
	require.NoError(t, ext.Shutdown(context.Background()))
}
