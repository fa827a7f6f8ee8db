package replayparquetexporter

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/replaycase"
)

// fuzzKeys are the attributes a hostile or broken sender may set or spoil.
var fuzzKeys = []string{
	replaycase.AttrCaseID, replaycase.AttrSchemaVersion, replaycase.AttrStatus, replaycase.AttrReasons,
	replaycase.AttrStepIndex, replaycase.AttrStepKind, replaycase.AttrToolCalls, replaycase.AttrSpanCount,
	replaycase.AttrMetadata, replaycase.AttrRawSpans, "gen_ai.input.messages", "replay.unknown",
}

// FuzzDecodeCasesConservesCases checks, for case spans spoiled in any way, that every group of
// case spans (one trace, one claimed case id) ends in exactly one place — a case or a counted
// drop — and that no quarantine row takes the id its spans claimed.
// Run: go test -run '^$' -fuzz FuzzDecodeCasesConservesCases -fuzztime 60s ./exporter/replayparquetexporter/
func FuzzDecodeCasesConservesCases(f *testing.F) {
	f.Add([]byte{0, 0, 1, 'x'})
	f.Add([]byte{3, 4, 2, 7, 9, 0, 0, 0})
	f.Add([]byte{1, 1, 3, 0xff, 2, 2, 0, 0})
	td, _ := caseSpans(f, testfixtures.OTelEvents, testfixtures.OTelNoContent)
	f.Fuzz(func(t *testing.T, edits []byte) {
		batch := ptrace.NewTraces()
		td.CopyTo(batch)
		var spans []ptrace.Span
		forEachSpan(batch, func(_, _ int, _ ptrace.ResourceSpans, _ ptrace.ScopeSpans, sp ptrace.Span) { spans = append(spans, sp) })
		for len(edits) >= 4 {
			sp := spans[int(edits[0])%len(spans)]
			key := fuzzKeys[int(edits[1])%len(fuzzKeys)]
			switch edits[2] % 6 {
			case 0:
				sp.Attributes().Remove(key)
			case 1:
				sp.Attributes().PutStr(key, string(edits[3:4]))
			case 2:
				sp.Attributes().PutInt(key, int64(edits[3]))
			case 3:
				sp.Attributes().PutEmptyBytes(key).FromRaw(edits[3:4])
			case 4:
				sp.SetTraceID(pcommon.TraceID{edits[3]})
			case 5:
				sp.SetSpanID(pcommon.SpanID{})
				sp.SetTraceID(pcommon.TraceID{})
			}
			edits = edits[4:]
		}

		groups := map[groupKey]bool{}
		claimed := map[string]bool{}
		forEachSpan(batch, func(_, _ int, _ ptrace.ResourceSpans, _ ptrace.ScopeSpans, sp ptrace.Span) {
			if id, isCase := caseKey(sp.Attributes()); isCase {
				groups[groupKey{sp.TraceID(), id}] = true
				claimed[id] = true
			}
		})
		out := decodeCases(batch)
		if got := len(out.cases) + len(out.dropped); got != len(groups) {
			t.Fatalf("%d groups of case spans in, %d cases and %d drops out", len(groups), len(out.cases), len(out.dropped))
		}
		isolated := 0
		for _, c := range out.cases {
			if c.HasReason(reasonUndecodable) {
				isolated++
				if claimed[c.CaseID] {
					t.Fatalf("quarantine row %s takes a claimed case id", c.CaseID)
				}
			} else if !claimed[c.CaseID] {
				t.Fatalf("case %s was not claimed by any span", c.CaseID)
			}
		}
		if isolated != out.isolated {
			t.Fatalf("counted %d isolated cases, wrote %d", out.isolated, isolated)
		}
	})
}
