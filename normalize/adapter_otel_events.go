package normalize

import (
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/reprise-dev/reprise/replaycase"
)

// genAIEvent is one GenAI event, from a log record or a span event.
type genAIEvent struct {
	name string
	body map[string]any // log record body, or span event attributes
}

// EventName returns the event name of a log record: the EventName field, or the event.name
// attribute older SDKs write.
func EventName(lr plog.LogRecord) string {
	if n := lr.EventName(); n != "" {
		return n
	}
	if v, ok := lr.Attributes().Get("event.name"); ok {
		return v.AsString()
	}
	return ""
}

// IsGenAIEvent reports whether a log record is a GenAI event the processor joins into cases.
func IsGenAIEvent(lr plog.LogRecord) bool {
	return strings.HasPrefix(EventName(lr), "gen_ai.")
}

// events lists the GenAI events of a span: span events first, then joined log records, each in
// recorded order.
func events(in *SpanInput) []genAIEvent {
	var out []genAIEvent
	evs := in.Span.Events()
	for i := 0; i < evs.Len(); i++ {
		ev := evs.At(i)
		if strings.HasPrefix(ev.Name(), "gen_ai.") {
			out = append(out, genAIEvent{name: ev.Name(), body: attrsBody(ev.Attributes())})
		}
	}
	// Pydantic AI 0.x: the events as a JSON array in the span attribute "events".
	if v, ok := in.Span.Attributes().Get("events"); ok {
		if raw, err := decodeAny(v, true); err == nil {
			list, _ := raw.([]any)
			for _, item := range list {
				if m, ok := item.(map[string]any); ok && strings.HasPrefix(mapStr(m, "event.name"), "gen_ai.") {
					out = append(out, genAIEvent{name: mapStr(m, "event.name"), body: m})
				}
			}
		}
	}
	for _, lr := range in.Events {
		body, _ := lr.Body().AsRaw().(map[string]any)
		if body == nil {
			body = map[string]any{}
			if s := lr.Body().AsString(); s != "" {
				body["content"] = s
			}
		}
		out = append(out, genAIEvent{name: EventName(lr), body: body})
	}
	return out
}

// attrsBody turns span event attributes into an event body. Semantic Kernel writes the choice
// message as a JSON string in "message"; it is parsed when it is valid JSON.
func attrsBody(a pcommon.Map) map[string]any {
	body := a.AsRaw()
	if s, ok := body["message"].(string); ok {
		if parsed, err := parseJSON(s); err == nil {
			body["message"] = parsed
		}
	}
	return body
}

// otelEvents reads semconv 1.28–1.36 per-message events: gen_ai.{system,user,assistant,tool}.message
// and gen_ai.choice, as log records joined to the span or as span events. It also reads the
// >= 1.37 gen_ai.client.inference.operation.details event.
func otelEvents(in *SpanInput, b *stepBuilder) bool {
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

// otelContentEvents reads semconv 1.26–1.27 span events gen_ai.content.prompt (attribute
// gen_ai.prompt) and gen_ai.content.completion (attribute gen_ai.completion), each a JSON list
// of OpenAI-style messages.
func otelContentEvents(in *SpanInput, b *stepBuilder) bool {
	used := false
	evs := in.Span.Events()
	for i := 0; i < evs.Len(); i++ {
		ev := evs.At(i)
		var key, role string
		switch ev.Name() {
		case "gen_ai.content.prompt":
			key, role = "gen_ai.prompt", "user"
		case "gen_ai.content.completion":
			key, role = "gen_ai.completion", "assistant"
		default:
			continue
		}
		used = true
		v, ok := ev.Attributes().Get(key)
		if !ok {
			continue
		}
		msgs, err := openAIMessageList(v, role)
		if err != nil {
			b.problem(ev.Name()+" "+key, err)
		}
		if role == "user" {
			b.setInput(msgs)
		} else {
			b.setOutput(msgs)
		}
	}
	if used {
		b.kind(replaycase.StepLLM, "chat")
	}
	return used
}

// openAIMessageList reads a JSON list of OpenAI-style messages. A value that is plain text and
// not JSON becomes one message of the given role.
func openAIMessageList(v pcommon.Value, role string) ([]replaycase.Message, error) {
	raw, err := decodeAny(v, true)
	if err != nil {
		s := strings.TrimSpace(v.AsString())
		if s != "" && s[0] != '[' && s[0] != '{' {
			return []replaycase.Message{{Role: role, Parts: []replaycase.Part{{Type: "text", Content: v.AsString()}}}}, nil
		}
		return nil, err
	}
	list, ok := raw.([]any)
	if !ok {
		list = []any{raw}
	}
	out := make([]replaycase.Message, 0, len(list))
	for _, item := range list {
		if m, ok := item.(map[string]any); ok {
			out = append(out, openAIMessage(m, role))
		} else {
			out = append(out, replaycase.Message{Role: role, Parts: []replaycase.Part{{Type: "text", Content: text(item)}}})
		}
	}
	return out, nil
}
