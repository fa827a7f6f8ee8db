package normalize

import (
	"fmt"
	"slices"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/reprise-dev/reprise/replaycase"
)

// Two conventions on one span that record the same field (semconv's gen_ai.input.messages and
// OpenInference's input messages, say) fill it in precedence order: the first one's value is
// kept. When a later one recorded another value, the step holds one of two and nothing says
// which the call had, so the step is reported conflicting_conventions. Conventions that agree
// are not: instrumentations often write both forms of the same thing. Compared are the input and
// output messages, the request and response model and each token count, as the case stores
// them; a value a convention does not record (an empty one, a count of 0) agrees with any.

// offers holds, for each compared field that a convention can offer more than one value for,
// the convention that offered one last. Only a convention's first value is compared: its later
// ones are its own fallbacks (OpenInference's input.value behind llm.input_messages).
type offers struct {
	input, output, requestModel, responseModel string
}

// firstOffer reports whether the running convention offers its first value for the field whose
// last offer last holds, and notes the offer.
func (b *stepBuilder) firstOffer(last *string) bool {
	first := *last != b.conv
	*last = b.conv
	return first
}

// conflict reports the running convention's value that differs from the one the step keeps.
func (b *stepBuilder) conflict(detail string) {
	b.Findings = append(b.Findings, replaycase.Reason{Code: replaycase.ReasonConflictingConventions, SpanID: b.spanID,
		Detail: b.conv + ": " + detail})
}

// compareMessages reports msgs, the running convention's first messages for a field an earlier
// convention filled with kept, when they are not the same. System instructions recorded apart
// (gen_ai.system_instructions) agree with a leading system message of the same parts.
func (b *stepBuilder) compareMessages(what string, kept, msgs []replaycase.Message) {
	if sameMessages(kept, msgs) || (what == "input" && sameMessages(withSystem(b.Step.SystemInstructions, kept), msgs)) {
		return
	}
	b.conflict(fmt.Sprintf("%s messages (%d) differ from an earlier convention's (%d), which are kept", what, len(msgs), len(kept)))
}

// sameMessages tells whether two conventions recorded the same messages. What only some
// conventions record agrees with its absence: a message's finish reason, a part's item id and
// its is_error mark.
func sameMessages(a, b []replaycase.Message) bool {
	return slices.EqualFunc(a, b, func(x, y replaycase.Message) bool {
		return x.Role == y.Role && x.Name == y.Name &&
			(x.FinishReason == y.FinishReason || x.FinishReason == "" || y.FinishReason == "") &&
			slices.EqualFunc(x.Parts, y.Parts, func(p, q replaycase.Part) bool {
				if p.ItemID == "" || q.ItemID == "" {
					p.ItemID, q.ItemID = "", ""
				}
				p.Error, q.Error = false, false
				return p == q
			})
	})
}

// setModel fills a model name with v, recorded in where, or reports v when it is the running
// convention's first for a name an earlier convention filled with another.
func (b *stepBuilder) setModel(dst, last *string, v, where string) {
	if v == "" {
		return
	}
	if b.firstOffer(last) && *dst != "" && *dst != v {
		b.conflict(fmt.Sprintf("%s is %q; an earlier convention's %q is kept", where, v, *dst))
	}
	setStr(dst, v)
}

// compareCount reports the count the first of keys holds when it differs from kept, a count an
// earlier convention filled (each convention reads each count once). A value that is no count
// is left to the convention that reads it.
func (b *stepBuilder) compareCount(kept int64, a pcommon.Map, keys []string) {
	for _, k := range keys {
		v, ok := a.Get(k)
		if !ok {
			continue
		}
		if n, ok := toInt(v.AsRaw()); ok {
			if n != 0 && n != kept {
				b.conflict(fmt.Sprintf("%s is %d; an earlier convention's %d is kept", k, n, kept))
			}
			return
		}
	}
}
