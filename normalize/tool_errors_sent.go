package normalize

import "github.com/reprise-dev/reprise/replaycase"

// keepSentToolErrors keeps the failure marks of a model step's tool results (Part.Error) only
// when its API sends them: Anthropic Messages' tool_result is_error. Chat Completions and
// Responses have no such member, so the Vercel AI SDK's OpenAI providers send a failed result
// (an error-text or error-json output in ai.prompt.messages) as its value alone: the model got
// no mark, nor can the request the agent sends again to the replay server carry one, and a
// recording that kept it would miss that request. Such a step does not cover is_error.
func keepSentToolErrors(b *stepBuilder) {
	if b.Step.Kind != replaycase.StepLLM || b.Step.API == replaycase.APIAnthropicMessages {
		return
	}
	b.toolErrorsRecorded = false
	for _, m := range b.Step.InputMessages {
		for i := range m.Parts {
			m.Parts[i].Error = false
		}
	}
}
