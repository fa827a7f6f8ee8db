package normalize

import (
	"fmt"
	"slices"

	"github.com/reprise-dev/reprise/replaycase"
	"github.com/reprise-dev/reprise/wireapi"
)

// settingFields are the members of recorded request parameters that carry the reasoning
// settings (Chat's reasoning_effort, the Responses API's reasoning, Anthropic's thinking and
// output_config.effort) and the tool and output settings (parallel_tool_calls, verbosity,
// logit_bias), which wireapi.ParseChatParams reads.
var settingFields = []string{"reasoning_effort", "reasoning", "thinking", "output_config", "parallel_tool_calls", "verbosity", "logit_bias"}

// checkSettings reports a malformed setting of recorded request parameters (params, decoded
// from raw) instead of letting it pass as "not sent": the parser leaves the parameters unread
// then, and a request without the setting would match the recording.
func (b *stepBuilder) checkSettings(params map[string]any, raw []byte, where string) {
	if !slices.ContainsFunc(settingFields, func(k string) bool { _, ok := params[k]; return ok }) {
		return // the text is parsed only when it has one
	}
	if err := wireapi.CheckSettingParams(raw); err != nil {
		b.invalid(replaycase.ReasonInvalidParameter, fmt.Sprintf("%s: %v", where, err))
	}
}
