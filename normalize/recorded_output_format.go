package normalize

import (
	"fmt"
	"slices"

	"github.com/reprise-dev/reprise/replaycase"
	"github.com/reprise-dev/reprise/wireapi"
)

// recordedOutputFormat is where recorded request parameters carry an output format other than
// Chat's response_format (which wireapi.ParseChatParams reads): the members that hold it and
// the parser of the endpoint that reads them live.
type recordedOutputFormat struct {
	fields []string
	parse  func(raw []byte) (format, outputType string, err error)
}

var (
	// anthropicOutputFormat is Anthropic's structured output: output_config (its format) and
	// the beta output_format.
	anthropicOutputFormat = recordedOutputFormat{[]string{"output_config", "output_format"}, wireapi.MessagesOutputFormat}
	// responsesOutputFormat is the Responses API's text.format.
	responsesOutputFormat = recordedOutputFormat{[]string{"text"}, wireapi.ResponsesOutputFormat}
)

// setOutputFormat reads the output format of recorded request parameters (params, decoded
// from raw: recordedText) into mc, with the parser of the endpoint, so that a recording made for
// JSON output is told from one made for text. One that is no format object is reported instead
// of read as "no format". A response_format read already is kept.
func (b *stepBuilder) setOutputFormat(of recordedOutputFormat, mc *replaycase.ModelConfig, params map[string]any, raw []byte, where string) {
	if !slices.ContainsFunc(of.fields, func(k string) bool { _, ok := params[k]; return ok }) {
		return // the text is parsed only when it has one
	}
	format, outputType, err := of.parse(raw)
	if err != nil {
		b.invalid(replaycase.ReasonInvalidParameter, fmt.Sprintf("%s: %v", where, err))
		return
	}
	setStr(&mc.ResponseFormat, format)
	setStr(&mc.OutputType, outputType)
}
