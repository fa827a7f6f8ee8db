package normalize

import (
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/reprise-dev/reprise/replaycase"
)

// otelEvents reads semconv 1.28–1.36 per-message events: gen_ai.{system,user,assistant,tool}.message
// and gen_ai.choice, as log records joined to the span or as span events. It also reads the
// >= 1.37 gen_ai.client.inference.operation.details event.
func otelEvents(in *spanInput, b *stepBuilder) bool {
	var inputs, outputs []replaycase.Message
	used := false
	for _, ev := range events(in) {
		switch ev.name {
		case "gen_ai.system.message":
			inputs = append(inputs, openAIMessage(ev.body, "system"))
		case "gen_ai.user.message":
			inputs = append(inputs, openAIMessage(ev.body, "user"))
		case "gen_ai.assistant.message":
			inputs = append(inputs, openAIMessage(ev.body, "assistant"))
		case "gen_ai.tool.message":
			m := openAIMessage(ev.body, "tool")
			if len(m.Parts) == 0 || m.Parts[0].Type != "tool_call_response" {
				m.Parts = append([]replaycase.Part{{Type: "tool_call_response", ID: mapStr(ev.body, "id")}}, m.Parts...)
			}
			inputs = append(inputs, m)
		case "gen_ai.choice":
			msg, _ := ev.body["message"].(map[string]any)
			if msg == nil {
				msg = map[string]any{}
			}
			m := openAIMessage(msg, "assistant")
			m.FinishReason = FinishReason(mapStr(ev.body, "finish_reason"))
			outputs = append(outputs, m)
		case "gen_ai.client.inference.operation.details":
			details := pcommon.NewMap()
			_ = details.FromRaw(ev.body)
			readSemconvAttributes(details, b, ev.name+": ")
		default:
			continue
		}
		used = true
	}
	if !used {
		return false
	}
	b.setInput(inputs)
	b.setOutput(outputs)
	if len(inputs) > 0 || len(outputs) > 0 {
		b.kind(replaycase.StepLLM, "chat")
	}
	return true
}
