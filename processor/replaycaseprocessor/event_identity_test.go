package replaycaseprocessor

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/reprise-dev/reprise/internal/testfixtures"
)

// event is a GenAI log event with a map body, changed by edit.
func event(edit func(lr plog.LogRecord)) plog.LogRecord {
	lr := plog.NewLogRecord()
	lr.SetSpanID(pcommon.SpanID{1, 2, 3, 4, 5, 6, 7, 8})
	lr.SetTimestamp(1_700_000_000_000_000_000)
	lr.SetSeverityNumber(plog.SeverityNumberInfo)
	lr.SetEventName("gen_ai.choice")
	body := lr.Body().SetEmptyMap()
	body.PutInt("index", 0)
	body.PutStr("finish_reason", "stop")
	msg := body.PutEmptyMap("message")
	msg.PutStr("role", "assistant")
	msg.PutStr("content", "Paris")
	calls := msg.PutEmptySlice("tool_calls")
	calls.AppendEmpty().SetStr("lookup")
	lr.Attributes().PutStr("gen_ai.system", "openai")
	lr.Attributes().PutDouble("score", 0.5)
	if edit != nil {
		edit(lr)
	}
	return lr
}

func TestEventIdentityIsTheSameForTheSameEvent(t *testing.T) {
	assert.Equal(t, eventIdentity(event(nil)), eventIdentity(event(nil)))
	// A map body's keys in another order: the same content (its JSON text, which the identity
	// was first computed from, sorted them).
	reordered := event(func(lr plog.LogRecord) {
		body := lr.Body().SetEmptyMap()
		msg := body.PutEmptyMap("message")
		msg.PutEmptySlice("tool_calls").AppendEmpty().SetStr("lookup")
		msg.PutStr("content", "Paris")
		msg.PutStr("role", "assistant")
		body.PutStr("finish_reason", "stop")
		body.PutInt("index", 0)
	})
	assert.Equal(t, eventIdentity(event(nil)), eventIdentity(reordered))
}

func TestEventIdentityDiffersWhenAnythingDiffers(t *testing.T) {
	edits := map[string]func(lr plog.LogRecord){
		"span id":         func(lr plog.LogRecord) { lr.SetSpanID(pcommon.SpanID{9}) },
		"timestamp":       func(lr plog.LogRecord) { lr.SetTimestamp(lr.Timestamp() + 1) },
		"severity number": func(lr plog.LogRecord) { lr.SetSeverityNumber(plog.SeverityNumberWarn) },
		"severity text":   func(lr plog.LogRecord) { lr.SetSeverityText("INFO") },
		"event name":      func(lr plog.LogRecord) { lr.SetEventName("gen_ai.assistant.message") },
		"nested string":   func(lr plog.LogRecord) { v, _ := lr.Body().Map().Get("message"); v.Map().PutStr("content", "Lyon") },
		"slice element":   func(lr plog.LogRecord) { lr.Body().Map().PutEmptySlice("extra").AppendEmpty().SetInt(1) },
		"int as string":   func(lr plog.LogRecord) { lr.Body().Map().PutStr("index", "0") },
		"double":          func(lr plog.LogRecord) { lr.Attributes().PutDouble("score", 0.25) },
		"bool":            func(lr plog.LogRecord) { lr.Attributes().PutBool("streamed", false) },
		"bytes":           func(lr plog.LogRecord) { lr.Attributes().PutEmptyBytes("blob").FromRaw([]byte{0}) },
		"attribute key":   func(lr plog.LogRecord) { lr.Attributes().Remove("score"); lr.Attributes().PutDouble("scores", 0.5) },
		"string body":     func(lr plog.LogRecord) { lr.Body().SetStr(`{"index":0}`) },
		"empty body":      func(lr plog.LogRecord) { plog.NewLogRecord().Body().CopyTo(lr.Body()) },
		"attribute order": func(lr plog.LogRecord) {
			lr.Attributes().Remove("gen_ai.system")
			lr.Attributes().PutStr("gen_ai.system", "openai")
		},
		// Lengths are hashed: moving a character from one string to the next is a change.
		"string boundary": func(lr plog.LogRecord) { lr.SetEventName("gen_ai.choic"); lr.SetSeverityText("e") },
	}
	seen := map[eventKey]string{eventIdentity(event(nil)): "the event"}
	for name, edit := range edits {
		k := eventIdentity(event(edit))
		if other, ok := seen[k]; ok {
			t.Errorf("%s: same identity as %s", name, other)
		}
		seen[k] = name
	}
}

// A client that sends the fixture's events twice has each kept once.
func TestEventIdentityOfTheFixturesEvents(t *testing.T) {
	for _, run := range []string{testfixtures.OTelEvents, testfixtures.OpenInference, testfixtures.Traceloop} {
		first, again := testfixtures.Logs(t, run), testfixtures.Logs(t, run)
		var keys, keysAgain []eventKey
		collect := func(ld plog.Logs, into *[]eventKey) {
			for i := range ld.ResourceLogs().Len() {
				for j := range ld.ResourceLogs().At(i).ScopeLogs().Len() {
					lrs := ld.ResourceLogs().At(i).ScopeLogs().At(j).LogRecords()
					for k := range lrs.Len() {
						*into = append(*into, eventIdentity(lrs.At(k)))
					}
				}
			}
		}
		collect(first, &keys)
		collect(again, &keysAgain)
		require.Equal(t, keys, keysAgain, run)
		distinct := map[eventKey]bool{}
		for _, k := range keys {
			distinct[k] = true
		}
		assert.Len(t, distinct, len(keys), "%s: every event of one run is its own", run)
	}
}

func BenchmarkEventIdentity(b *testing.B) {
	lr := event(nil)
	b.ReportAllocs()
	for b.Loop() {
		eventIdentity(lr)
	}
}
