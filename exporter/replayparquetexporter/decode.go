package replayparquetexporter

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/replaycase"
)

// reasonUndecodable quarantines the spans of a case the exporter could not decode from the
// canonical form: a case span without its case-level attributes, garbage replay.* values, a
// schema version this build does not read, replay.* attributes without a replay.case_id.
const reasonUndecodable = "undecodable_case"

// decoded is one batch, case by case.
type decoded struct {
	cases []*replaycase.Case
	// isolated counts the quarantine rows made for span groups that could not be decoded.
	isolated int
	// dropped are the groups that could not even be given an id (no trace id and no span id).
	dropped []droppedGroup
	// ignored counts spans without any replay.* attribute: not case spans.
	ignored int
}

// droppedGroup is a group of case spans without any id to give its quarantine row.
type droppedGroup struct {
	claimed string
	spans   int
	err     error
}

// decodeCases decodes the case spans of a batch one case at a time, so that one span the
// exporter cannot decode costs only its own case: that case becomes a quarantine row with
// reason undecodable_case (keeping its spans for a re-drive), and the other cases of the batch
// are written as usual. The whole batch is decoded at once when every span is well formed.
func decodeCases(td ptrace.Traces) decoded {
	out := decoded{}
	// The whole batch is decoded at once only if every case span has a case id and no case id
	// is claimed in two traces (replaycase.Decode merges spans by case id alone).
	malformed := false
	traceOf := map[string]pcommon.TraceID{}
	forEachSpan(td, func(_, _ int, _ ptrace.ResourceSpans, _ ptrace.ScopeSpans, sp ptrace.Span) {
		caseID, isCase := caseKey(sp.Attributes())
		if !isCase {
			out.ignored++
			return
		}
		if tid, seen := traceOf[caseID]; seen && tid != sp.TraceID() {
			malformed = true
		}
		traceOf[caseID] = sp.TraceID()
		malformed = malformed || caseID == ""
	})
	if !malformed {
		if cases, err := replaycase.Decode(td); err == nil {
			out.cases = cases
			return out
		}
	}
	groups, order := groupByCase(td)
	for _, key := range order {
		g := groups[key]
		if key.caseID != "" {
			cases, err := replaycase.Decode(g.traces)
			if err == nil && len(cases) == 1 {
				out.cases = append(out.cases, cases[0])
				continue
			}
			if err == nil {
				err = fmt.Errorf("decoded %d cases", len(cases))
			}
			g.err = err
		}
		c, ok := g.quarantine(key.caseID)
		if !ok {
			out.dropped = append(out.dropped, droppedGroup{claimed: key.caseID, spans: g.traces.SpanCount(), err: g.err})
			continue
		}
		out.cases = append(out.cases, c)
		out.isolated++
	}
	return out
}

// spanGroup holds the spans that claim one case id, with their resources and scopes.
type spanGroup struct {
	traces ptrace.Traces
	scopes map[[2]int]ptrace.SpanSlice // (resource, scope) index in the batch → copy
	err    error
}

// groupKey identifies the spans of one case: the spans of a real case all carry its trace id,
// so a span of another trace that claims the same case id cannot spoil the real case.
type groupKey struct {
	traceID pcommon.TraceID
	caseID  string
}

// groupByCase splits the case spans of td by trace id and replay.case_id, copying them (td is
// shared with the pipeline's other consumers). Spans with replay.* attributes but no usable
// replay.case_id get the case id "": they cannot be decoded.
func groupByCase(td ptrace.Traces) (groups map[groupKey]*spanGroup, order []groupKey) {
	groups = map[groupKey]*spanGroup{}
	forEachSpan(td, func(i, j int, rs ptrace.ResourceSpans, ss ptrace.ScopeSpans, sp ptrace.Span) {
		caseID, isCase := caseKey(sp.Attributes())
		if !isCase {
			return
		}
		key := groupKey{sp.TraceID(), caseID}
		g, ok := groups[key]
		if !ok {
			g = &spanGroup{traces: ptrace.NewTraces(), scopes: map[[2]int]ptrace.SpanSlice{}}
			if caseID == "" {
				g.err = fmt.Errorf("replay.* attributes without a string %s", replaycase.AttrCaseID)
			}
			groups[key] = g
			order = append(order, key)
		}
		sp.CopyTo(g.add(i, j, rs, ss).AppendEmpty())
	})
	return groups, order
}

// forEachSpan calls fn for every span of td with the indexes of its resource and scope.
func forEachSpan(td ptrace.Traces, fn func(i, j int, rs ptrace.ResourceSpans, ss ptrace.ScopeSpans, sp ptrace.Span)) {
	for i := 0; i < td.ResourceSpans().Len(); i++ {
		rs := td.ResourceSpans().At(i)
		for j := 0; j < rs.ScopeSpans().Len(); j++ {
			ss := rs.ScopeSpans().At(j)
			for k := 0; k < ss.Spans().Len(); k++ {
				fn(i, j, rs, ss, ss.Spans().At(k))
			}
		}
	}
}

// caseKey returns the span's claimed case id and whether it is a case span at all.
func caseKey(attrs pcommon.Map) (string, bool) {
	if v, ok := attrs.Get(replaycase.AttrCaseID); ok {
		if v.Type() == pcommon.ValueTypeStr && v.Str() != "" {
			return v.Str(), true
		}
		return "", true
	}
	isCase := false
	attrs.Range(func(k string, _ pcommon.Value) bool {
		isCase = strings.HasPrefix(k, "replay.")
		return !isCase
	})
	return "", isCase
}

func (g *spanGroup) add(i, j int, rs ptrace.ResourceSpans, ss ptrace.ScopeSpans) ptrace.SpanSlice {
	if spans, ok := g.scopes[[2]int{i, j}]; ok {
		return spans
	}
	out := g.traces.ResourceSpans().AppendEmpty()
	rs.Resource().CopyTo(out.Resource())
	out.SetSchemaUrl(rs.SchemaUrl())
	scope := out.ScopeSpans().AppendEmpty()
	ss.Scope().CopyTo(scope.Scope())
	scope.SetSchemaUrl(ss.SchemaUrl())
	g.scopes[[2]int{i, j}] = scope.Spans()
	return scope.Spans()
}

// quarantine makes the quarantine row of a group that could not be decoded. Its case id is
// derived from the spans (never the claimed id, which a sender could have chosen to shadow or
// forge a real case), in a namespace of its own so that it cannot equal a real case's id.
func (g *spanGroup) quarantine(claimed string) (*replaycase.Case, bool) {
	var traceID, anchor, service string
	var start, end time.Time
	forEachSpan(g.traces, func(_, _ int, rs ptrace.ResourceSpans, _ ptrace.ScopeSpans, sp ptrace.Span) {
		if v, ok := rs.Resource().Attributes().Get("service.name"); ok && service == "" {
			service = v.AsString()
		}
		if traceID == "" && !sp.TraceID().IsEmpty() {
			traceID = sp.TraceID().String()
		}
		if id := sp.SpanID(); !id.IsEmpty() && (anchor == "" || id.String() < anchor) {
			anchor = id.String()
		}
		if s := replaycase.UnixNanoUTC(sp.StartTimestamp()); !s.IsZero() && (start.IsZero() || s.Before(start)) {
			start = s
		}
		if e := replaycase.UnixNanoUTC(sp.EndTimestamp()); e.After(end) {
			end = e
		}
	})
	if traceID == "" && anchor == "" {
		return nil, false
	}
	h := sha256.Sum256([]byte("replay-undecodable\x00" + traceID + "\x00" + anchor + "\x00" + claimed))
	raw, _ := (&ptrace.ProtoMarshaler{}).MarshalTraces(g.traces)
	detail := g.err.Error()
	if claimed != "" {
		detail = fmt.Sprintf("claimed case_id %q: %s", claimed, detail)
	}
	c := &replaycase.Case{
		CaseID:        hex.EncodeToString(h[:16]),
		SchemaVersion: dataset.SchemaVersion,
		Provenance:    replaycase.Provenance{TraceID: traceID, ServiceName: service, SpanCount: int64(g.traces.SpanCount())},
		StartTime:     start,
		EndTime:       end,
		RawSpans:      raw,
	}
	c.Quarantine(reasonUndecodable, detail, anchor)
	return c, true
}
