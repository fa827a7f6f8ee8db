package replaycase

// LastLLMStep is the LLM step that ended last (of two that ended together, the later one): its
// first output message is the case's final_output when the root agent span recorded none
// (docs/case-model.md). Nil when the case has no LLM step.
func (c *Case) LastLLMStep() *Step {
	var last *Step
	for i := range c.Steps {
		if s := &c.Steps[i]; s.Kind == StepLLM && (last == nil || !s.EndTime.Before(last.EndTime)) {
			last = s
		}
	}
	return last
}
