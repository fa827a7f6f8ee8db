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
// (which of the two ends first varies from run to run, and under load the SDK's span can end
// after the next call began). Left as two steps, the case would expect two requests and be
// quarantined for the empty one.

// foldDuplicateModelCalls drops each model step that records the same call as exactly one
// other model step (and is the only one to match that step): a content-less step matching a
// step with content, or, when both recorded content (the Anthropic SDK in its content mode),
// the inner or later one. The kept step takes what only the dropped one recorded: its response
// id and its conventions. A step that matches no step, or several equally well, stays; a
// content-less one is then reported by the evidence check.
func foldDuplicateModelCalls(steps []normalized) []normalized {
	into := map[int]int{}    // duplicate step → the step it duplicates
	matched := map[int]int{} // kept step → how many duplicates match it
	// Call-site ids, each computed once when a comparison first needs it: every pair of model
	// steps is compared, and an id canonicalizes the step's whole request.
	siteIDs := make([]string, len(steps))
	siteID := func(k int) string {
		if siteIDs[k] == "" {
			siteIDs[k] = callsite.FromStep(&steps[k].Step).ID(nil)
		}
		return siteIDs[k]
	}
	for i := range steps {
		x := &steps[i].Step
		if x.Kind != replaycase.StepLLM {
			continue
		}
		// The match is the one step with the strongest evidence; two at that strength leave
		// nothing to tell them apart.
		match, best := -1, noMatch
		for j := range steps {
			y := &steps[j].Step
			if j == i || y.Kind != replaycase.StepLLM || !recordsContent(y) {
				continue
			}
			switch m := duplicates(x, y, func() bool { return siteID(i) == siteID(j) }); {
			case m > best:
				match, best = j, m
			case m == best && m != noMatch:
				match = -1
			}
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

// callMatch is how strongly two model steps are shown to record one call.
type callMatch int

const (
	noMatch callMatch = iota
	// matchByTime: siblings over the same time that agree on everything both recorded, when
	// neither recorded anything that tells one call from the next of the same kind (token
	// counts, response id). The last resort: under load an earlier call's span can still be
	// open when the next one starts, and then both overlap and none is folded.
	matchByTime
	// matchByEvidence: one is the other's child, or they record the same response id, or they
	// are siblings that recorded the same token counts.
	matchByEvidence
)

// duplicates tells how strongly step x is a second record of the call step y (which has
// content) recorded: sameModelCall when x has no content; when it has, x must be y's child, or
// share y's response id, or share y's parent and be the same call (sameModelCall), send the same
// request and get the same answer; and be the later of the two, so that of two records one is
// kept. sameRequest tells whether the two sent the same request (the same call-site id).
func duplicates(x, y *replaycase.Step, sameRequest func() bool) callMatch {
	if !recordsContent(x) {
		return sameModelCall(x, y)
	}
	if x.ModelConfig.Provider != y.ModelConfig.Provider || y.ParentSpanID == x.SpanID {
		return noMatch
	}
	if x.ResponseID != "" && y.ResponseID != "" && x.ResponseID != y.ResponseID {
		return noMatch
	}
	if x.ParentSpanID == y.SpanID {
		return matchByEvidence
	}
	if !stepBefore(y, x) {
		return noMatch
	}
	if x.ResponseID != "" && x.ResponseID == y.ResponseID {
		return matchByEvidence
	}
	if !sameRequest() || answer(x) != answer(y) {
		return noMatch
	}
	return sameModelCall(x, y)
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

// sameModelCall tells how strongly step x records the call of step y. They must have the same
// provider and agree on every model, parameter, response id and token count both recorded; then
// x being y's child, or having y's response id, is evidence, and so is being y's sibling with
// the same token counts. A sibling that recorded no token counts (or whose sibling did not)
// matches by time overlap only.
func sameModelCall(x, y *replaycase.Step) callMatch {
	if x.ModelConfig.Provider != y.ModelConfig.Provider || disagree(x, y) {
		return noMatch
	}
	switch {
	case x.ParentSpanID == y.SpanID:
		return matchByEvidence
	case x.ResponseID != "" && x.ResponseID == y.ResponseID:
		return matchByEvidence
	case x.ParentSpanID != y.ParentSpanID:
		return noMatch
	case recordsTokens(x) && recordsTokens(y):
		return matchByEvidence // disagree has checked that the counts are equal
	case x.StartTime.Before(y.EndTime) && y.StartTime.Before(x.EndTime):
		return matchByTime
	}
	return noMatch
}

// disagree tells whether x and y recorded different values of something one call has once: the
// request and response models, the request parameters, the response id, the token counts.
// What only one of them recorded does not count.
func disagree(x, y *replaycase.Step) bool {
	differ := func(a, b string) bool { return a != "" && b != "" && a != b }
	a, b := &x.ModelConfig, &y.ModelConfig
	return differ(a.RequestModel, b.RequestModel) || differ(a.ResponseModel, b.ResponseModel) ||
		differ(x.ResponseID, y.ResponseID) ||
		differPtr(a.MaxTokens, b.MaxTokens) || differPtr(a.Temperature, b.Temperature) ||
		differPtr(a.TopP, b.TopP) || differPtr(a.Seed, b.Seed) || differPtr(a.TopK, b.TopK) ||
		differPtr(a.FrequencyPenalty, b.FrequencyPenalty) || differPtr(a.PresencePenalty, b.PresencePenalty) ||
		differPtr(a.ChoiceCount, b.ChoiceCount) || differ(a.OutputType, b.OutputType) ||
		differ(a.ReasoningEffort, b.ReasoningEffort) || differ(a.ReasoningSummary, b.ReasoningSummary) ||
		differPtr(a.ParallelToolCalls, b.ParallelToolCalls) || differ(a.Verbosity, b.Verbosity) ||
		(recordsTokens(x) && recordsTokens(y) &&
			(x.Usage.InputTokens != y.Usage.InputTokens || x.Usage.OutputTokens != y.Usage.OutputTokens))
}

func differPtr[T comparable](a, b *T) bool { return a != nil && b != nil && *a != *b }

// recordsTokens tells whether a step recorded its call's token counts (a call reads and writes
// at least one token; zero means not recorded).
func recordsTokens(st *replaycase.Step) bool {
	return st.Usage.InputTokens > 0 && st.Usage.OutputTokens > 0
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
