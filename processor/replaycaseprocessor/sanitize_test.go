package replaycaseprocessor

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

func TestSanitizeTracesEveryLevel(t *testing.T) {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("replay.case_id", "x")
	rs.Resource().Attributes().PutStr("service.name", "svc\xff")
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("scope\xfe")
	ss.Scope().Attributes().PutStr("replay.status", "accepted")
	sp := ss.Spans().AppendEmpty()
	sp.SetName("chat\xc3")
	sp.Status().SetMessage("bad\xc3")
	sl := sp.Attributes().PutEmptySlice("list")
	sl.AppendEmpty().SetStr("a\xff")
	sl.AppendEmpty().SetEmptyMap().PutStr("replay.reasons", "[]")
	sp.Attributes().PutStr("replay_not_reserved", "kept")
	ev := sp.Events().AppendEmpty()
	ev.SetName("gen_ai.choice")
	ev.Attributes().PutStr("replay.case_id", "y")
	ln := sp.Links().AppendEmpty()
	ln.Attributes().PutStr("replay.case_id", "z")

	s := sanitizeTraces(td)
	assert.Equal(t, sanitized{reserved: 5, repaired: 5}, s)
	v, _ := rs.Resource().Attributes().Get("service.name")
	assert.Equal(t, "svc\uFFFD", v.Str())
	assert.Equal(t, "scope\uFFFD", ss.Scope().Name())
	assert.Equal(t, "chat\uFFFD", sp.Name())
	assert.Equal(t, "a\uFFFD", sl.At(0).Str())
	assert.Zero(t, sl.At(1).Map().Len())
	_, kept := sp.Attributes().Get("replay_not_reserved")
	assert.True(t, kept, "only the replay. prefix is reserved")
	assert.Zero(t, ev.Attributes().Len())
	assert.Zero(t, ln.Attributes().Len())
	assert.Equal(t, sanitized{}, sanitizeTraces(td), "sanitizing twice changes nothing")
}

func TestSanitizeRepairsKeys(t *testing.T) {
	m := pcommon.NewMap()
	m.PutStr("k\xff", "v1")
	m.PutStr("k\uFFFD", "v2") // what the bad key repairs to: the existing value wins
	m.PutStr("replay.\xff", "v3")
	m.PutStr("ok\xfe", "v4\xfe")
	var s sanitized
	s.attrs(m)
	assert.Equal(t, map[string]any{"k\uFFFD": "v2", "ok\uFFFD": "v4\uFFFD"}, m.AsRaw())
	assert.Equal(t, sanitized{reserved: 1, repaired: 4}, s)
}

func TestSanitizeLogsBodyAndAttributes(t *testing.T) {
	ld := plog.NewLogs()
	lr := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	lr.SetEventName("gen_ai.user.message")
	lr.Body().SetEmptyMap().PutStr("content", "hi\xff")
	lr.Attributes().PutStr("replay.case_id", "x")
	s := sanitizeLogs(ld)
	assert.Equal(t, sanitized{reserved: 1, repaired: 1}, s)
	assert.Equal(t, map[string]any{"content": "hi\uFFFD"}, lr.Body().Map().AsRaw())
}
