package pdatawalk

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// traces builds two resources; the first has two scopes (spans a, b | c), the second one
// empty scope and one scope with span d.
func traces() ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "one")
	s0 := rs.ScopeSpans().AppendEmpty()
	s0.Spans().AppendEmpty().SetName("a")
	s0.Spans().AppendEmpty().SetName("b")
	rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty().SetName("c")
	rs2 := td.ResourceSpans().AppendEmpty()
	rs2.Resource().Attributes().PutStr("service.name", "two")
	rs2.ScopeSpans().AppendEmpty()
	rs2.ScopeSpans().AppendEmpty().Spans().AppendEmpty().SetName("d")
	return td
}

func TestSpansVisitsEverySpanInOrderWithItsLocation(t *testing.T) {
	var got []string
	for s := range Spans(traces()) {
		svc, _ := s.Resource.Resource().Attributes().Get("service.name")
		got = append(got, s.Span.Name()+"@"+svc.Str()+string(rune('0'+s.ResourceIndex))+string(rune('0'+s.ScopeIndex)))
	}
	assert.Equal(t, []string{"a@one00", "b@one00", "c@one01", "d@two11"}, got)
}

func TestSpansStopsWhenTheLoopBreaks(t *testing.T) {
	var seen []string
	for s := range Spans(traces()) {
		seen = append(seen, s.Span.Name())
		if len(seen) == 2 {
			break // the iterator must not yield again: Go panics if it does
		}
	}
	assert.Equal(t, []string{"a", "b"}, seen, "the first two spans, in order, once each")
	for range Spans(ptrace.NewTraces()) {
		t.Fatal("an empty trace has no spans")
	}
}

func logs() plog.Logs {
	ld := plog.NewLogs()
	for r, bodies := range [][][]string{{{"keep1", "drop1"}, {"drop2"}}, {{"drop3"}}, {{"keep2"}}} {
		rl := ld.ResourceLogs().AppendEmpty()
		rl.Resource().Attributes().PutInt("r", int64(r))
		for _, scope := range bodies {
			sl := rl.ScopeLogs().AppendEmpty()
			for _, b := range scope {
				sl.LogRecords().AppendEmpty().Body().SetStr(b)
			}
		}
	}
	return ld
}

func TestLogRecordsVisitsEveryRecord(t *testing.T) {
	var got []string
	for lr := range LogRecords(logs()) {
		got = append(got, lr.Record.Body().Str())
	}
	assert.Equal(t, []string{"keep1", "drop1", "drop2", "drop3", "keep2"}, got)
}

func TestRemoveLogRecordsIfPrunesEmptyScopesAndResources(t *testing.T) {
	ld := logs()
	var visited []string
	RemoveLogRecordsIf(ld, func(lr LogRecord) bool {
		r, _ := lr.Resource.Resource().Attributes().Get("r")
		assert.Equal(t, int64(lr.ResourceIndex), r.Int())
		visited = append(visited, lr.Record.Body().Str())
		return lr.Record.Body().Str()[:4] == "drop"
	})
	assert.Equal(t, []string{"keep1", "drop1", "drop2", "drop3", "keep2"}, visited)
	var left []string
	for lr := range LogRecords(ld) {
		left = append(left, lr.Record.Body().Str())
	}
	assert.Equal(t, []string{"keep1", "keep2"}, left)
	assert.Equal(t, 2, ld.ResourceLogs().Len(), "the resource with only dropped records is gone")
	assert.Equal(t, 1, ld.ResourceLogs().At(0).ScopeLogs().Len(), "the scope with only dropped records is gone")
}
