package normalize

import (
	"slices"
	"strings"

	"github.com/reprise-dev/reprise/callsite"
	"github.com/reprise-dev/reprise/replaycase"
)

// One model call can arrive as two spans: an instrumentation's span with the content, and the
// client SDK's own span without it. The Anthropic TypeScript SDK 1.x emits GenAI spans
// whenever a tracer provider is registered; under OpenInference its span for messages.create
// is the child of OpenInference's span, and for messages.stream a sibling over the same time
// (which of the two ends first varies from run to run). Left as two steps, the case would expect two requests and be quarantined for the empty
// one.

// foldDuplicateModelCalls drops each model step that records the same call as exactly one
// other model step (and is the only one to match that step): a content-less step matching a
// step with content, or, when both recorded content (the Anthropic SDK in its content mode),
// the inner or later one. The kept step takes what only the dropped one recorded: its response
// id and its conventions. A step that matches no step, or several, stays; a content-less one
// is then reported by the evidence check.
func foldDuplicateModelCalls(steps []normalized) []normalized {
	into := map[int]int{}    // duplicate step → the step it duplicates
	matched := map[int]int{} // kept step → how many duplicates match it
	for i := range steps {
		x := &steps[i].Step
		if x.Kind != replaycase.StepLLM {
			continue
		}
		match := -1
		for j := range steps {
			y := &steps[j].Step
			if j == i || y.Kind != replaycase.StepLLM || !recordsContent(y) || !duplicates(x, y) {
				continue
			}
			if match >= 0 {
				match = -1
				break
			}
			match = j
		}
		if match >= 0 {
			into[i] = match
			matched[match]++
		}
	}
	drop := map[int]bool{}
	for i := range steps {
		if j, ok := into[i]; ok && matched[j] == 1 && !drop[j] {
			absorb(&steps[j].Step, &steps[i].Step)
			drop[i] = true
		}
	}
	return withoutDropped(steps, drop)
}

// duplicates tells whether step x is a second record of the call step y (which has content)
// recorded: sameModelCall when x has no content; when it has, x must be y's child, or share
// y's response id, or share y's parent, overlap it in time, send the same request and get the
// same answer; and be the later of the two, so that of two records one is kept.
func duplicates(x, y *replaycase.Step) bool {
	if !recordsContent(x) {
		return sameModelCall(x, y)
	}
	if x.ModelConfig.Provider != y.ModelConfig.Provider || y.ParentSpanID == x.SpanID {
		return false
	}
	if x.ResponseID != "" && y.ResponseID != "" && x.ResponseID != y.ResponseID {
		return false
	}
	if x.ParentSpanID == y.SpanID {
		return true
	}
	later := stepBefore(y, x)
	if x.ResponseID != "" && x.ResponseID == y.ResponseID {
		return later
	}
	return later && sameModelCall(x, y) && callsite.FromStep(x).ID(nil) == callsite.FromStep(y).ID(nil) && answer(x) == answer(y)
}

// answer is what a model step answered, for telling two records of one call from two calls with
// the same request (sampling): its text and the ids of the tools it called.
func answer(st *replaycase.Step) string {
	var b strings.Builder
	for _, m := range st.OutputMessages {
		for _, p := range m.Parts {
			if p.Type == "tool_call" {
				b.WriteString("\x00" + p.ID + "\x00")
			} else {
				b.WriteString(p.Content)
			}
		}
	}
	return b.String()
}

func recordsContent(st *replaycase.Step) bool {
	return hasContent(st.InputMessages) || hasContent(st.OutputMessages)
}

// sameModelCall tells whether content-less step x records the call of step y: the same
// provider and model, and x is y's child, or has y's response id, or shares y's parent and
// overlaps y in time.
func sameModelCall(x, y *replaycase.Step) bool {
	if x.ModelConfig.Provider != y.ModelConfig.Provider {
		return false
	}
	if a, b := x.ModelConfig.RequestModel, y.ModelConfig.RequestModel; a != "" && b != "" && a != b {
		return false
	}
	switch {
	case x.ParentSpanID == y.SpanID:
		return true
	case x.ResponseID != "" && x.ResponseID == y.ResponseID:
		return true
	case x.ParentSpanID == y.ParentSpanID:
		return x.StartTime.Before(y.EndTime) && y.StartTime.Before(x.EndTime)
	}
	return false
}

// absorb gives keep what only dup recorded of the same call.
func absorb(keep, dup *replaycase.Step) {
	setStr(&keep.ResponseID, dup.ResponseID)
	for _, c := range dup.Conventions {
		if !slices.Contains(keep.Conventions, c) {
			keep.Conventions = append(keep.Conventions, c)
		}
	}
}

// withoutDropped returns steps without the ones whose index drop holds (steps itself when none).
func withoutDropped(steps []normalized, drop map[int]bool) []normalized {
	if len(drop) == 0 {
		return steps
	}
	out := make([]normalized, 0, len(steps)-len(drop))
	for i := range steps {
		if !drop[i] {
			out = append(out, steps[i])
		}
	}
	return out
}
