package normalize

import (
	"slices"

	"github.com/reprise-dev/reprise/replaycase"
)

// One model call can arrive as two spans: an instrumentation's span with the content, and the
// client SDK's own span without it. The Anthropic TypeScript SDK 1.x emits GenAI spans
// whenever a tracer provider is registered; under OpenInference its span for messages.create
// is the child of OpenInference's span, and for messages.stream a sibling over the same time
// (which of the two ends first varies from run to run). Left as two steps, the case would expect two requests and be quarantined for the empty
// one.

// foldDuplicateModelCalls drops each content-less model step that records the same call as
// exactly one model step with content (and is the only one to match that step); the kept step
// takes what only the dropped one recorded: its response id and its conventions. A
// content-less step that matches no step, or several, stays, and the evidence check reports it.
func foldDuplicateModelCalls(steps []normalized) []normalized {
	into := map[int]int{}    // content-less step → the step it duplicates
	matched := map[int]int{} // step with content → how many content-less steps match it
	for i := range steps {
		x := &steps[i].Step
		if x.Kind != replaycase.StepLLM || recordsContent(x) {
			continue
		}
		match := -1
		for j := range steps {
			y := &steps[j].Step
			if j == i || y.Kind != replaycase.StepLLM || !recordsContent(y) || !sameModelCall(x, y) {
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
	for i, j := range into {
		if matched[j] == 1 {
			absorb(&steps[j].Step, &steps[i].Step)
			drop[i] = true
		}
	}
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
