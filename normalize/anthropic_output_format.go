package normalize

import (
	"encoding/json"
	"fmt"

	"github.com/reprise-dev/reprise/replaycase"
	"github.com/reprise-dev/reprise/wireapi"
)

// anthropicOutputFields are the members of recorded request parameters that carry Anthropic's
// structured output: output_config (its format) and the beta output_format.
var anthropicOutputFields = []string{"output_config", "output_format"}

// setAnthropicOutputFormat reads the structured output of recorded Anthropic request
// parameters into mc, as the Messages endpoint reads it from a live request, so that a
// recording made for JSON output is told from one made for text. One that is no format object
// is reported instead of read as "no format". A response_format read already is kept.
func (b *stepBuilder) setAnthropicOutputFormat(mc *replaycase.ModelConfig, params map[string]any, where string) {
	members := map[string]any{}
	for _, k := range anthropicOutputFields {
		if v, ok := params[k]; ok {
			members[k] = v
		}
	}
	if len(members) == 0 {
		return
	}
	raw, err := json.Marshal(members) // decoded JSON: it encodes
	if err != nil {
		return
	}
	format, outputType, err := wireapi.MessagesOutputFormat(raw)
	if err != nil {
		b.invalid(replaycase.ReasonInvalidParameter, fmt.Sprintf("%s: %v", where, err))
		return
	}
	setStr(&mc.ResponseFormat, format)
	setStr(&mc.OutputType, outputType)
}
