package replaycaseprocessor

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/internal/pdatawalk"
	"github.com/reprise-dev/reprise/replaycase"
)

// A span sent without a span id (all zero, which OTLP calls invalid) gives a step without one,
// and the canonical form cannot write a step span without an id: replaycase.Encode failed and
// the whole run was dropped as encode_error, although the fault is the client's input. Such a
// run is quarantined instead (invalid_span_id), its steps without an id given a substitute so
// that the case can be written; the original spans are kept in the case's raw spans
// (raw_spans: quarantined).

// quarantineMissingSpanIDs quarantines c when a span of the run has no span id, and gives each
// step without a valid span id a substitute. Call it once the case id is final: the substitute
// is derived from it.
func quarantineMissingSpanIDs(c *replaycase.Case, spans ptrace.Traces) {
	var names []string
	for s := range pdatawalk.Spans(spans) {
		if s.Span.SpanID().IsEmpty() {
			names = append(names, fmt.Sprintf("%q", s.Span.Name()))
		}
	}
	var substituted []string
	for i := range c.Steps {
		st := &c.Steps[i]
		if validSpanID(st.SpanID) {
			continue
		}
		st.SpanID = substituteSpanID(c.CaseID, st.Index)
		substituted = append(substituted, fmt.Sprintf("step %d %q: %s", st.Index, st.Name, st.SpanID))
	}
	if len(names) == 0 && len(substituted) == 0 {
		return
	}
	detail := fmt.Sprintf("%d spans have an all-zero (empty) span id: %s", len(names), strings.Join(names, ", "))
	if len(substituted) > 0 {
		detail += "; steps written with a substitute span id: " + strings.Join(substituted, ", ")
	}
	c.Quarantine(replaycase.ReasonInvalidSpanID, detail, "")
}

// validSpanID tells whether s is the hex of a non-zero 8-byte span id. It runs for every step of
// every case, so it decodes into an array instead of a new slice.
func validSpanID(s string) bool {
	var id pcommon.SpanID
	if len(s) != hex.EncodedLen(len(id)) {
		return false
	}
	_, err := hex.Decode(id[:], []byte(s))
	return err == nil && !id.IsEmpty()
}

// substituteSpanID is a span id derived from the case id and the step's index: the same run
// built again gets the same one, and it is never all zero.
func substituteSpanID(caseID string, index int) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "%s/no-span-id/%d", caseID, index))
	id := pcommon.SpanID(sum[:8])
	if id.IsEmpty() {
		id[7] = 1
	}
	return id.String()
}
