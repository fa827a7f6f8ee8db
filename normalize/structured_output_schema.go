package normalize

import (
	"encoding/json"
	"fmt"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/reprise-dev/reprise/replaycase"
)

// Some instrumentations record only the JSON schema a call asked its output to follow, not the
// format object it sent: OpenLLMetry's gen_ai.request.structured_output_schema (the schema of
// a json_schema response_format, a Pydantic model's or Gemini's response_schema), the Vercel AI
// SDK's ai.schema on its generateObject / streamObject span. Such a schema says the call asked
// for JSON (output type "json"), but not the format object as sent: the name, strict and the
// provider's wrapping are not recorded, so response_format stays unset rather than invented.

// schemaOutputType is "json" when the attribute key holds a JSON schema, a JSON object (as
// text or as a structured map). One that holds anything else is reported as invalid_parameter
// and gives "": it must not pass for a request without a format, nor for one with. An absent
// or empty attribute is not recorded.
func (b *stepBuilder) schemaOutputType(a pcommon.Map, key string) string {
	v, ok := a.Get(key)
	if !ok {
		return ""
	}
	s := strings.TrimSpace(v.AsString()) // a map value is written as its JSON
	if s == "" {
		return ""
	}
	if !strings.HasPrefix(s, "{") || !json.Valid([]byte(s)) {
		b.invalid(replaycase.ReasonInvalidParameter, fmt.Sprintf("%s is %s, not a JSON schema object", key, quoteValue(v)))
		return ""
	}
	return "json"
}

// carryOutputType gives each model step without an output type of its own the one its parent
// span asks of the calls under it (callsOutputType): the Vercel AI SDK records the schema of
// generateObject / streamObject on that span, and every doGenerate / doStream under it sent it.
func carryOutputType(steps []normalized) {
	asked := map[string]string{}
	for i := range steps {
		if t := steps[i].callsOutputType; t != "" {
			asked[steps[i].Step.SpanID] = t
		}
	}
	if len(asked) == 0 {
		return
	}
	for i := range steps {
		st := &steps[i].Step
		if t, ok := asked[st.ParentSpanID]; ok && st.Kind == replaycase.StepLLM {
			setStr(&st.ModelConfig.OutputType, t)
		}
	}
}
