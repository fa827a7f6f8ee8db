package normalize

import (
	"fmt"
	"slices"

	"github.com/reprise-dev/reprise/replaycase"
	"github.com/reprise-dev/reprise/wireapi"
)

// reasoningFields are the members of recorded request parameters that carry the reasoning
// settings (Chat's reasoning_effort, the Responses API's reasoning, Anthropic's thinking),
// which wireapi.ParseChatParams reads.
var reasoningFields = []string{"reasoning_effort", "reasoning", "thinking"}

// checkReasoning reports a malformed reasoning setting of recorded request parameters (params,
// decoded from raw) instead of letting it pass as "no reasoning": the parser leaves the
// parameters unread then, and a request without reasoning would match the recording.
func (b *stepBuilder) checkReasoning(params map[string]any, raw []byte, where string) {
	if !slices.ContainsFunc(reasoningFields, func(k string) bool { _, ok := params[k]; return ok }) {
		return // the text is parsed only when it has one
	}
	if err := wireapi.CheckReasoningParams(raw); err != nil {
		b.invalid(replaycase.ReasonInvalidParameter, fmt.Sprintf("%s: %v", where, err))
	}
}
