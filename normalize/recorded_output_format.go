package normalize

import (
	"fmt"
	"slices"

	"github.com/reprise-dev/reprise/replaycase"
	"github.com/reprise-dev/reprise/wireapi"
)

// anthropicOutputFields are the members of recorded request parameters that carry Anthropic's
// structured output: output_config (its format) and the beta output_format.
var anthropicOutputFields = []string{"output_config", "output_format"}

// setAnthropicOutputFormat reads the structured output of recorded Anthropic request
// parameters (params, decoded from raw: recordedText) into mc, with the parser of the Messages
// endpoint, so that a recording made for JSON output is told from one made for text. One that
// is no format object is reported instead of read as "no format". A response_format read
// already is kept.
func (b *stepBuilder) setAnthropicOutputFormat(mc *replaycase.ModelConfig, params map[string]any, raw []byte, where string) {
	if !slices.ContainsFunc(anthropicOutputFields, func(k string) bool { _, ok := params[k]; return ok }) {
		return // the text is parsed only when it has one
	}
	format, outputType, err := wireapi.MessagesOutputFormat(raw)
	if err != nil {
		b.invalid(replaycase.ReasonInvalidParameter, fmt.Sprintf("%s: %v", where, err))
		return
	}
	setStr(&mc.ResponseFormat, format)
	setStr(&mc.OutputType, outputType)
}
