package normalize

import (
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
)

// genAIEvent is one GenAI event, from a log record or a span event.
type genAIEvent struct {
	name   string
	body   map[string]any // log record body, or span event attributes
	attrs  map[string]any // span event attributes (the body again); for a log record see record
	spanID string         // the span the event belongs to
	// record is the log record the event came from, if any: its attributes (where semconv >=
	// 1.37 events put their fields) are decoded only when fields asks for them, as most events
	// are messages, read from the body alone.
	record    plog.LogRecord
	hasRecord bool
}

// fields is what a semconv >= 1.37 event says: its attributes, with what its body says where
// the attributes are silent (some SDKs put everything in the body).
func (ev genAIEvent) fields() map[string]any {
	attrs := ev.attrs
	if ev.hasRecord {
		attrs = ev.record.Attributes().AsRaw()
	}
	out := make(map[string]any, len(attrs)+len(ev.body))
	for k, v := range ev.body {
		out[k] = v
	}
	for k, v := range attrs {
		out[k] = v
	}
	return out
}

// eventName returns the event name of a log record: the EventName field, or the event.name
// attribute older SDKs write.
func eventName(lr plog.LogRecord) string {
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
	return strings.HasPrefix(eventName(lr), "gen_ai.")
}

// events lists the GenAI events of a span: span events first, then joined log records, each in
// recorded order.
func events(in *spanInput) []genAIEvent {
	var out []genAIEvent
	evs := in.Span.Events()
	for i := 0; i < evs.Len(); i++ {
		ev := evs.At(i)
		if strings.HasPrefix(ev.Name(), "gen_ai.") {
			body := attrsBody(ev.Attributes())
			out = append(out, genAIEvent{name: ev.Name(), body: body, attrs: body, spanID: in.SpanID})
		}
	}
	// Pydantic AI 0.x: the events as a JSON array in the span attribute "events".
	if v, ok := in.Span.Attributes().Get("events"); ok {
		if raw, err := decodeAny(v, true); err == nil {
			list, _ := raw.([]any)
			for _, item := range list {
				if m, ok := item.(map[string]any); ok && strings.HasPrefix(mapStr(m, "event.name"), "gen_ai.") {
					out = append(out, genAIEvent{name: mapStr(m, "event.name"), body: m, attrs: m, spanID: in.SpanID})
				}
			}
		}
	}
	for _, lr := range in.Events { // each of the span's own: its id is the span's
		out = append(out, logEvent(lr, in.SpanID))
	}
	return out
}

// logEvent is a GenAI log record as an event, spanID its span id as text. A body that is not a
// map is its content.
func logEvent(lr plog.LogRecord, spanID string) genAIEvent {
	body, _ := lr.Body().AsRaw().(map[string]any)
	if body == nil {
		body = map[string]any{}
		if s := lr.Body().AsString(); s != "" {
			body["content"] = s
		}
	}
	return genAIEvent{name: eventName(lr), body: body, record: lr, hasRecord: true, spanID: spanID}
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
