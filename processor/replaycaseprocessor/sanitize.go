package replaycaseprocessor

import (
	"strings"
	"unicode/utf8"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/replaycase"
)

// reservedPrefix is the attribute namespace of case spans. The exporter and every reader treat
// a span carrying it as a case, so it must never come from a client.
const reservedPrefix = "replay."

// sanitized counts what sanitizing one piece of telemetry changed.
type sanitized struct {
	reserved int // replay.* attributes removed
	repaired int // strings (values, keys, names) that were not valid UTF-8, repaired with U+FFFD
}

func (s *sanitized) add(o sanitized) {
	s.reserved += o.reserved
	s.repaired += o.repaired
}

// sanitizeTraces removes replay.* attributes at every level (resource, scope, span, span
// event, link) and repairs invalid UTF-8 in every string, in place. Parquet readers such as
// DuckDB refuse a whole file over one invalid string, and a client-set replay.* attribute
// would forge or poison a case.
func sanitizeTraces(td ptrace.Traces) sanitized {
	var s sanitized
	for i := 0; i < td.ResourceSpans().Len(); i++ {
		rs := td.ResourceSpans().At(i)
		s.attrs(rs.Resource().Attributes())
		for j := 0; j < rs.ScopeSpans().Len(); j++ {
			ss := rs.ScopeSpans().At(j)
			s.scope(ss.Scope())
			for k := 0; k < ss.Spans().Len(); k++ {
				sp := ss.Spans().At(k)
				s.str(sp.Name, sp.SetName)
				s.str(sp.Status().Message, sp.Status().SetMessage)
				s.str(sp.TraceState().AsRaw, sp.TraceState().FromRaw)
				s.attrs(sp.Attributes())
				for e := 0; e < sp.Events().Len(); e++ {
					ev := sp.Events().At(e)
					s.str(ev.Name, ev.SetName)
					s.attrs(ev.Attributes())
				}
				for l := 0; l < sp.Links().Len(); l++ {
					ln := sp.Links().At(l)
					s.str(ln.TraceState().AsRaw, ln.TraceState().FromRaw)
					s.attrs(ln.Attributes())
				}
			}
		}
	}
	return s
}

// sanitizeLogs does for log records what sanitizeTraces does for spans.
func sanitizeLogs(ld plog.Logs) sanitized {
	var s sanitized
	for i := 0; i < ld.ResourceLogs().Len(); i++ {
		rl := ld.ResourceLogs().At(i)
		s.attrs(rl.Resource().Attributes())
		for j := 0; j < rl.ScopeLogs().Len(); j++ {
			sl := rl.ScopeLogs().At(j)
			s.scope(sl.Scope())
			for k := 0; k < sl.LogRecords().Len(); k++ {
				lr := sl.LogRecords().At(k)
				s.str(lr.EventName, lr.SetEventName)
				s.str(lr.SeverityText, lr.SetSeverityText)
				s.value(lr.Body())
				s.attrs(lr.Attributes())
			}
		}
	}
	return s
}

func (s *sanitized) scope(sc pcommon.InstrumentationScope) {
	s.str(sc.Name, sc.SetName)
	s.str(sc.Version, sc.SetVersion)
	s.attrs(sc.Attributes())
}

// attrs removes reserved keys and repairs keys and values. A repaired key that collides with an
// existing one keeps the existing value: the collision is itself counted as a repair.
func (s *sanitized) attrs(m pcommon.Map) {
	var badKeys []string
	m.RemoveIf(func(k string, v pcommon.Value) bool {
		if !utf8.ValidString(k) {
			badKeys = append(badKeys, k)
			return false
		}
		if strings.HasPrefix(k, reservedPrefix) {
			s.reserved++
			return true
		}
		s.value(v)
		return false
	})
	for _, k := range badKeys {
		v, _ := m.Get(k)
		fixed := pcommon.NewValueEmpty()
		v.MoveTo(fixed)
		m.Remove(k)
		s.repaired++
		good := strings.ToValidUTF8(k, "\uFFFD")
		if strings.HasPrefix(good, reservedPrefix) {
			s.reserved++
			continue
		}
		if _, exists := m.Get(good); exists {
			continue
		}
		s.value(fixed)
		fixed.MoveTo(m.PutEmpty(good))
	}
}

// value repairs a value's strings; map values inside it lose reserved keys too.
func (s *sanitized) value(v pcommon.Value) {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		s.str(v.Str, v.SetStr)
	case pcommon.ValueTypeMap:
		s.attrs(v.Map())
	case pcommon.ValueTypeSlice:
		for i := 0; i < v.Slice().Len(); i++ {
			s.value(v.Slice().At(i))
		}
	}
}

func (s *sanitized) str(get func() string, set func(string)) {
	if v := get(); !utf8.ValidString(v) {
		set(strings.ToValidUTF8(v, "\uFFFD"))
		s.repaired++
	}
}

// takeCaseSpans moves the spans that carry replay.case_id out of td, keeping resource and
// scope. Only a trusted upstream tier may send them (trusted_upstream); they pass through as
// they are.
func takeCaseSpans(td ptrace.Traces) ptrace.Traces {
	out := ptrace.NewTraces()
	for i := 0; i < td.ResourceSpans().Len(); i++ {
		rs := td.ResourceSpans().At(i)
		var dst ptrace.ResourceSpans
		for j := 0; j < rs.ScopeSpans().Len(); j++ {
			ss := rs.ScopeSpans().At(j)
			var dss ptrace.ScopeSpans
			ss.Spans().RemoveIf(func(sp ptrace.Span) bool {
				if _, ok := sp.Attributes().Get(replaycase.AttrCaseID); !ok {
					return false
				}
				if dst == (ptrace.ResourceSpans{}) {
					dst = out.ResourceSpans().AppendEmpty()
					rs.Resource().CopyTo(dst.Resource())
					dst.SetSchemaUrl(rs.SchemaUrl())
				}
				if dss == (ptrace.ScopeSpans{}) {
					dss = dst.ScopeSpans().AppendEmpty()
					ss.Scope().CopyTo(dss.Scope())
					dss.SetSchemaUrl(ss.SchemaUrl())
				}
				sp.MoveTo(dss.Spans().AppendEmpty())
				return true
			})
		}
	}
	return out
}
