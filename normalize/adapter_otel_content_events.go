package normalize

import (
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/reprise-dev/reprise/replaycase"
)

// otelContentEvents reads semconv 1.26–1.27 span events gen_ai.content.prompt (attribute
// gen_ai.prompt) and gen_ai.content.completion (attribute gen_ai.completion), each a JSON list
// of OpenAI-style messages.
func otelContentEvents(in *spanInput, b *stepBuilder) bool {
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
