package normalize

import "github.com/reprise-dev/reprise/replaycase"

// An agent framework's instrumentation can record a model call with a span of its own that
// wraps the client instrumentation's span for the same HTTP call, both with content: the
// OpenAI Agents SDK under openinference-instrumentation-openai-agents (its "response" span)
// and openinference-instrumentation-openai (its "Response" span, the child) together. Left as
// two steps, the case would expect two requests per call. The client's span is the call as
// sent (its input.value is the request body, where the framework's records the response's
// echo of the parameters), so it is the one kept.

// dropWrappingModelCalls removes each model step whose one model-step child has content and
// the same response id; everything else stays. Its findings go with it: they were about what
// the wrapping span recorded.
func dropWrappingModelCalls(steps []normalized) []normalized {
	bySpan := map[string]int{}
	for i := range steps {
		bySpan[steps[i].Step.SpanID] = i
	}
	children := map[int][]int{}
	for i := range steps {
		if p, ok := bySpan[steps[i].Step.ParentSpanID]; ok && steps[i].Step.Kind == replaycase.StepLLM {
			children[p] = append(children[p], i)
		}
	}
	drop := map[int]bool{}
	for p, kids := range children {
		parent, child := &steps[p].Step, &steps[kids[0]].Step
		if len(kids) == 1 && parent.Kind == replaycase.StepLLM && parent.ResponseID != "" &&
			parent.ResponseID == child.ResponseID && withContent(parent) && withContent(child) {
			drop[p] = true
		}
	}
	return withoutDropped(steps, drop)
}

func withContent(st *replaycase.Step) bool {
	return hasContent(st.InputMessages) && hasContent(st.OutputMessages)
}
