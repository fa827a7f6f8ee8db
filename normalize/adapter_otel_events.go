package normalize

import (
	"fmt"
	"math"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/reprise-dev/reprise/replaycase"
)

// otelEvents reads semconv 1.28–1.36 per-message events: gen_ai.{system,user,assistant,tool}.message
// and gen_ai.choice, as log records joined to the span or as span events. It also reads the
// >= 1.37 events: gen_ai.client.inference.operation.details (the call's attributes),
// gen_ai.client.operation.exception (the step's exceptions) and gen_ai.evaluation.result (the
// run's own scores).
func otelEvents(in *spanInput, b *stepBuilder) bool {
	var inputs, outputs, detailsOutputs []replaycase.Message
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
			_ = details.FromRaw(ev.fields())
			// A streamed call can be reported as several details events, one per output item
			// (the official OTel JS OpenAI instrumentation does so for Responses): together,
			// in event order, their output messages are the call's one response.
			prior := b.Step.OutputMessages
			b.Step.OutputMessages = nil
			readSemconvAttributes(details, b, ev.name+": ")
			detailsOutputs = append(detailsOutputs, b.Step.OutputMessages...)
			b.Step.OutputMessages = prior
		case "gen_ai.client.operation.exception":
			b.exception(ev.fields())
		case "gen_ai.evaluation.result":
			e, problem := evaluation(ev)
			b.Evaluations = append(b.Evaluations, e)
			if problem != nil {
				b.evalFindings = append(b.evalFindings, *problem)
			}
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
	b.setOutput(detailsOutputs)
	if len(inputs) > 0 || len(outputs) > 0 {
		b.kind(replaycase.StepLLM, "chat")
	}
	return true
}

// exception records a gen_ai.client.operation.exception event on the step. A failed step whose
// span says only that it failed takes the exception's type (or message) as its error.
func (b *stepBuilder) exception(f map[string]any) {
	ex := replaycase.Exception{Type: mapStr(f, "exception.type"), Message: mapStr(f, "exception.message"), Stacktrace: mapStr(f, "exception.stacktrace")}
	b.Step.Exceptions = append(b.Step.Exceptions, ex)
	if b.Step.Status == replaycase.StepError && b.Step.Error == errorUnnamed {
		if ex.Type != "" {
			b.Step.Error = ex.Type
		} else if ex.Message != "" {
			b.Step.Error = ex.Message
		}
	}
}

// evaluation reads a gen_ai.evaluation.result event. A score that is not a number is reported,
// never read as 0.
func evaluation(ev genAIEvent) (replaycase.Evaluation, *replaycase.Reason) {
	f := ev.fields()
	e := replaycase.Evaluation{
		Name:        mapStr(f, "gen_ai.evaluation.name"),
		ScoreLabel:  mapStr(f, "gen_ai.evaluation.score.label"),
		Explanation: mapStr(f, "gen_ai.evaluation.explanation"),
		ResponseID:  mapStr(f, "gen_ai.response.id"),
		ErrorType:   mapStr(f, "error.type"),
		SpanID:      ev.spanID,
	}
	raw, ok := f["gen_ai.evaluation.score.value"]
	if !ok || raw == nil {
		return e, nil
	}
	if v, ok := toFloat(raw); ok && !math.IsNaN(v) && !math.IsInf(v, 0) { // neither survives JSON
		e.ScoreValue = &v
		return e, nil
	}
	return e, &replaycase.Reason{Code: replaycase.ReasonUnparseableContent, SpanID: ev.spanID,
		Detail: fmt.Sprintf("gen_ai.evaluation.result %q: score %s is not a number", e.Name, text(raw))}
}
