package normalize

import (
	"fmt"

	"github.com/reprise-dev/reprise/replaycase"
)

// semconvMessages reads OTel GenAI (>= 1.37) messages: [{role, parts[], name?, finish_reason?}].
func semconvMessages(raw any) ([]replaycase.Message, error) {
	list, ok := raw.([]any)
	if !ok {
		return nil, fmt.Errorf("messages: want an array, got %T", raw)
	}
	out := make([]replaycase.Message, 0, len(list))
	for i, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("message %d: want an object, got %T", i, item)
		}
		parts, err := semconvParts(m["parts"])
		if err != nil {
			return nil, fmt.Errorf("message %d: %w", i, err)
		}
		out = append(out, replaycase.Message{
			Role:         canonicalRole(mapStr(m, "role")),
			Name:         mapStr(m, "name"),
			FinishReason: FinishReason(mapStr(m, "finish_reason")),
			Parts:        parts,
		})
	}
	return out, nil
}

// semconvParts reads a parts array (also the whole of gen_ai.system_instructions).
func semconvParts(raw any) ([]replaycase.Part, error) {
	if raw == nil {
		return nil, nil
	}
	if s, ok := raw.(string); ok { // a bare string is one text part
		return []replaycase.Part{{Type: "text", Content: s}}, nil
	}
	list, ok := raw.([]any)
	if !ok {
		return nil, fmt.Errorf("parts: want an array, got %T", raw)
	}
	out := make([]replaycase.Part, 0, len(list))
	for i, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("part %d: want an object, got %T", i, item)
		}
		p := replaycase.Part{
			Type:     mapStr(m, "type"),
			ID:       mapStr(m, "call_id", "id"), // Responses items: call_id is what results refer to, id the item's own (fc_…)
			Name:     mapStr(m, "name"),
			MimeType: mapStr(m, "mime_type"),
			Modality: mapStr(m, "modality"),
			URI:      mapStr(m, "uri"),
			FileID:   mapStr(m, "file_id"),
		}
		switch p.Type {
		case "tool_call":
			p.Arguments = text(m["arguments"])
			if id := mapStr(m, "id"); id != p.ID {
				p.ItemID = id // the official OTel JS instrumentation writes both for Responses
			}
		case "tool_call_response":
			p.Response = mapStr(m, "response", "result")
			if t, ok := singleTextBlock(m["response"]); ok {
				p.Response = t
			}
		case "text", "reasoning", "blob", "uri", "file", "":
			p.Content = text(m["content"])
		default: // server_tool_call, refusal, generic …: keep everything that was recorded
			if media, ok := anthropicMediaPart(m); ok {
				p = media
			} else if c, ok := m["content"]; ok {
				p.Content = text(c)
			} else {
				p.Content = text(m)
			}
		}
		out = append(out, p)
	}
	return out, nil
}

// openAIMessage reads one OpenAI chat message {role, content, tool_calls, tool_call_id, name}.
// content may be a string or an array of content parts.
func openAIMessage(m map[string]any, defaultRole string) replaycase.Message {
	msg := replaycase.Message{Role: canonicalRole(mapStr(m, "role")), Name: mapStr(m, "name")}
	if msg.Role == "" {
		msg.Role = defaultRole
	}
	if id := mapStr(m, "tool_call_id", "id"); msg.Role == "tool" && id != "" {
		msg.Parts = append(msg.Parts, replaycase.Part{Type: "tool_call_response", ID: id, Response: text(m["content"])})
		return msg
	}
	msg.Parts = append(msg.Parts, openAIContent(m["content"])...)
	msg.Parts = append(msg.Parts, openAIToolCalls(m["tool_calls"])...)
	return msg
}

func openAIContent(raw any) []replaycase.Part {
	switch c := raw.(type) {
	case nil:
		return nil
	case string:
		if c == "" {
			return nil
		}
		return []replaycase.Part{{Type: "text", Content: c}}
	case []any:
		var out []replaycase.Part
		for _, item := range c {
			m, ok := item.(map[string]any)
			if !ok {
				out = append(out, replaycase.Part{Type: "text", Content: text(item)})
				continue
			}
			switch t := mapStr(m, "type"); t {
			case "text", "input_text", "output_text":
				out = append(out, replaycase.Part{Type: "text", Content: mapStr(m, "text", "content")})
			case "image_url":
				url := ""
				if im, ok := m["image_url"].(map[string]any); ok {
					url = mapStr(im, "url")
				}
				out = append(out, replaycase.Part{Type: "uri", Modality: "image", URI: url})
			default:
				out = append(out, replaycase.Part{Type: t, Content: text(m)})
			}
		}
		return out
	}
	return []replaycase.Part{{Type: "text", Content: text(raw)}}
}

// openAIToolCalls reads [{id, type, function:{name, arguments}}] (arguments kept as recorded).
func openAIToolCalls(raw any) []replaycase.Part {
	list, _ := raw.([]any)
	var out []replaycase.Part
	for _, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			continue
		}
		p := replaycase.Part{Type: "tool_call", ID: mapStr(m, "id"), Name: mapStr(m, "name")}
		if fn, ok := m["function"].(map[string]any); ok {
			p.Name = mapStr(fn, "name")
			p.Arguments = text(fn["arguments"])
		} else if args, ok := m["arguments"]; ok {
			p.Arguments = text(args)
		}
		out = append(out, p)
	}
	return out
}

// toolDefinitions reads the three shapes in the wild: flat semconv {type, name, description,
// parameters}, OpenAI nested {type, function:{name, description, parameters}}, and Bedrock
// {name, description, inputSchema:{json}}.
func toolDefinitions(raw any) ([]replaycase.ToolDefinition, error) {
	list, ok := raw.([]any)
	if !ok {
		return nil, fmt.Errorf("tool definitions: want an array, got %T", raw)
	}
	out := make([]replaycase.ToolDefinition, 0, len(list))
	for i, item := range list {
		if s, ok := item.(string); ok { // Vercel: an array of JSON strings
			parsed, err := parseToolJSON(s)
			if err != nil {
				return nil, fmt.Errorf("tool definition %d: %w", i, err)
			}
			item = parsed
		}
		m, ok := item.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("tool definition %d: want an object, got %T", i, item)
		}
		out = append(out, toolDefinition(m))
	}
	return out, nil
}

func toolDefinition(m map[string]any) replaycase.ToolDefinition {
	d := replaycase.ToolDefinition{Type: mapStr(m, "type")}
	if fn, ok := m["function"].(map[string]any); ok {
		m = fn
	}
	if d.Type == "" {
		d.Type = "function"
	}
	d.Name = mapStr(m, "name")
	d.Description = mapStr(m, "description")
	switch {
	case m["parameters"] != nil:
		d.Parameters = text(m["parameters"])
	case m["inputSchema"] != nil:
		schema := m["inputSchema"]
		if wrapped, ok := schema.(map[string]any); ok && wrapped["json"] != nil {
			schema = wrapped["json"]
		}
		d.Parameters = text(schema)
	case m["input_schema"] != nil:
		d.Parameters = text(m["input_schema"])
	}
	return d
}

// singleTextBlock reads a tool result recorded as one Anthropic text block,
// [{"type":"text","text":"…"}], as its text: the Anthropic SDK's own spans record a string
// tool_result content in that form, and the API treats both the same, so the text is what
// was sent and what a replayed request carries.
func singleTextBlock(raw any) (string, bool) {
	list, ok := raw.([]any)
	if !ok || len(list) != 1 {
		return "", false
	}
	b, ok := list[0].(map[string]any)
	if !ok || len(b) != 2 || b["type"] != "text" {
		return "", false
	}
	t, ok := b["text"].(string)
	return t, ok
}
