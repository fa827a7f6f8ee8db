package wireapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/reprise-dev/reprise/replaycase"
)

// Anthropic Messages (POST /v1/messages).

// MessagesRequest is what an Anthropic Messages request says about a model call, in the case
// model's terms.
type MessagesRequest struct {
	Messages []replaycase.Message
	Tools    []replaycase.ToolDefinition
	Params   replaycase.ModelConfig
	Stream   bool
}

type messagesBody struct {
	Model         *string          `json:"model"`
	System        json.RawMessage  `json:"system"`
	Messages      []*anthropicMsg  `json:"messages"`
	Tools         []*anthropicTool `json:"tools"`
	MaxTokens     *int64           `json:"max_tokens"`
	Temperature   *float64         `json:"temperature"`
	TopP          *float64         `json:"top_p"`
	TopK          *int64           `json:"top_k"`
	StopSequences []*string        `json:"stop_sequences"`
	ToolChoice    json.RawMessage  `json:"tool_choice"`
	Stream        *bool            `json:"stream"`
	Thinking      json.RawMessage  `json:"thinking"`
	anthropicOutputFields
}

type anthropicMsg struct {
	Role    *string         `json:"role"`
	Content json.RawMessage `json:"content"`
}

type anthropicTool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

type anthropicBlock struct {
	Type      string          `json:"type"`
	Text      *string         `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
	Source    json.RawMessage `json:"source"` // of an image or document (anthropic_media.go)
}

// ParseMessagesRequest reads an Anthropic Messages request body strictly: a model, max_tokens
// and a non-empty messages array of user and assistant turns. A user turn's tool_result blocks
// become tool messages (one per result, as the case model and Chat Completions keep them;
// is_error marks the result's part as a failure),
// its other blocks a user message (image and document blocks as media parts:
// anthropic_media.go); an assistant turn's tool_use blocks become tool calls whose
// arguments are the input object. Its structured output (output_config.format, or the beta
// output_format) is read as Chat's response_format (anthropic_output_format.go). Errors are
// *RequestError.
func ParseMessagesRequest(body []byte) (*MessagesRequest, error) {
	var b messagesBody
	if err := decodeObject(body, &b); err != nil {
		return nil, err
	}
	switch {
	case b.Model == nil || *b.Model == "":
		return nil, missing("model")
	case b.MaxTokens == nil:
		return nil, missing("max_tokens")
	case len(b.Messages) == 0:
		return nil, missing("messages")
	}
	r := &MessagesRequest{Stream: b.Stream != nil && *b.Stream}
	r.Params = replaycase.ModelConfig{RequestModel: *b.Model, MaxTokens: b.MaxTokens, Temperature: b.Temperature, TopP: b.TopP, TopK: b.TopK}
	var err error
	if b.StopSequences != nil {
		if r.Params.Stop, err = stopStrings(b.StopSequences, "stop_sequences"); err != nil {
			return nil, err
		}
	}
	if r.Params.ToolChoice, err = rawText(b.ToolChoice, "tool_choice"); err != nil {
		return nil, err
	}
	if r.Params.ResponseFormat, r.Params.OutputType, err = b.readOutputFormat(); err != nil {
		return nil, err
	}
	if err = (reasoningFields{Thinking: b.Thinking, OutputConfig: b.OutputConfig, anthropic: true}).read(&r.Params); err != nil { // reasoning.go
		return nil, err
	}
	system, err := anthropicText(b.System, "system")
	if err != nil {
		return nil, err
	}
	if system != "" {
		r.Messages = append(r.Messages, replaycase.Message{Role: "system", Parts: []replaycase.Part{{Type: "text", Content: system}}})
	}
	for i, m := range b.Messages {
		param := fmt.Sprintf("messages[%d]", i)
		if m == nil || m.Role == nil {
			return nil, missing(param + ".role")
		}
		if *m.Role != "user" && *m.Role != "assistant" {
			return nil, invalidValue(param+".role", "user or assistant")
		}
		msgs, err := anthropicTurn(*m.Role, m.Content, param+".content")
		if err != nil {
			return nil, err
		}
		r.Messages = append(r.Messages, msgs...)
	}
	for i, t := range b.Tools {
		param := fmt.Sprintf("tools[%d]", i)
		if t == nil || t.Name == "" {
			return nil, missing(param + ".name")
		}
		if t.Type != "" && t.Type != "custom" { // server tools (web search, code execution) run at Anthropic
			return nil, invalidValue(param+".type", "custom (server tools cannot be replayed)")
		}
		r.Tools = append(r.Tools, replaycase.ToolDefinition{Type: "function", Name: t.Name, Description: t.Description})
	}
	return r, nil
}

// anthropicText is a system prompt: a string, or text blocks joined.
func anthropicText(raw json.RawMessage, param string) (string, error) {
	text, _, err := anthropicContent(raw, param, false)
	return text, err
}

// anthropicContent is a system prompt or tool result content: a string, or text blocks joined
// by a newline; with media, a tool result's image and document blocks (a tool that returns a
// screenshot or a file) too, as the parts anthropicMedia gives them, in their order after the
// text.
func anthropicContent(raw json.RawMessage, param string, media bool) (string, []replaycase.Part, error) {
	switch kind(raw) {
	case 0, 'n':
		return "", nil, nil
	case '"':
		var s string
		_ = json.Unmarshal(raw, &s)
		return s, nil, nil
	case '[':
		var blocks []anthropicBlock
		if json.Unmarshal(raw, &blocks) != nil {
			return "", nil, invalidType(param, "a string or an array of content blocks")
		}
		var text []string
		var parts []replaycase.Part
		for i, bl := range blocks {
			p := fmt.Sprintf("%s[%d]", param, i)
			switch {
			case bl.Type == "text" && bl.Text != nil:
				text = append(text, *bl.Text)
			case media && (bl.Type == "image" || bl.Type == "document"):
				part, err := anthropicMedia(bl.Type, bl.Source, p)
				if err != nil {
					return "", nil, err
				}
				parts = append(parts, part)
			case media:
				return "", nil, invalidValue(p+".type", "text, image or document")
			default:
				return "", nil, invalidValue(p+".type", "text")
			}
		}
		return strings.Join(text, "\n"), parts, nil
	}
	return "", nil, invalidType(param, "a string or an array of content blocks")
}

// anthropicTurn reads one user or assistant turn into case-model messages.
func anthropicTurn(role string, raw json.RawMessage, param string) ([]replaycase.Message, error) {
	if kind(raw) == '"' {
		var s string
		_ = json.Unmarshal(raw, &s)
		return []replaycase.Message{{Role: role, Parts: []replaycase.Part{{Type: "text", Content: s}}}}, nil
	}
	var blocks []json.RawMessage
	if kind(raw) != '[' || json.Unmarshal(raw, &blocks) != nil {
		return nil, invalidType(param, "a string or an array of content blocks")
	}
	var results []replaycase.Message
	own := replaycase.Message{Role: role}
	for i, item := range blocks {
		p := fmt.Sprintf("%s[%d]", param, i)
		var bl anthropicBlock
		if kind(item) != '{' || decodeObject(item, &bl) != nil {
			return nil, invalidType(p, "a content block object")
		}
		switch bl.Type {
		case "text":
			if bl.Text == nil {
				return nil, missing(p + ".text")
			}
			own.Parts = append(own.Parts, replaycase.Part{Type: "text", Content: *bl.Text})
		case "tool_use":
			if role != "assistant" || bl.ID == "" {
				return nil, invalidValue(p, "a tool_use block with an id, in an assistant turn")
			}
			args, err := rawText(bl.Input, p+".input")
			if err != nil {
				return nil, err
			}
			own.Parts = append(own.Parts, replaycase.Part{Type: "tool_call", ID: bl.ID, Name: bl.Name, Arguments: args})
		case "tool_result":
			if role != "user" || bl.ToolUseID == "" {
				return nil, invalidValue(p, "a tool_result block with a tool_use_id, in a user turn")
			}
			out, media, err := anthropicContent(bl.Content, p+".content", true)
			if err != nil {
				return nil, err
			}
			result := replaycase.Part{Type: "tool_call_response", ID: bl.ToolUseID, Response: out, Error: bl.IsError}
			results = append(results, replaycase.Message{Role: "tool", Parts: append([]replaycase.Part{result}, media...)})
		case "image", "document":
			part, err := anthropicMedia(bl.Type, bl.Source, p)
			if err != nil {
				return nil, err
			}
			own.Parts = append(own.Parts, part)
		case "thinking", "redacted_thinking": // the model's own reasoning, echoed back
		default:
			return nil, invalidValue(p+".type", "text, image, document, tool_use, tool_result or thinking")
		}
	}
	if len(own.Parts) > 0 {
		results = append(results, own)
	}
	return results, nil
}

// Rendering a recorded step as a Messages response.

type anthropicMessage struct {
	ID           string           `json:"id"`
	Type         string           `json:"type"`
	Role         string           `json:"role"`
	Model        string           `json:"model"`
	Content      []map[string]any `json:"content"`
	StopReason   *string          `json:"stop_reason"`
	StopSequence *string          `json:"stop_sequence"`
	Usage        anthropicUsage   `json:"usage"`
}

type anthropicUsage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
}

// anthropicBlocks renders a recorded step's output as content blocks: text, a recorded
// refusal's text, then tool_use with the recorded id and the arguments as the input object.
// The Messages API has no refusal block: a refusing model writes its words as text and stops
// with stop_reason "refusal" (anthropicStopReason), so a refusal recorded as a refusal part
// (OpenLLMetry, or a call recorded through OpenAI) is that text, not an empty answer.
func anthropicBlocks(st *replaycase.Step) []map[string]any {
	blocks := []map[string]any{}
	for _, m := range st.OutputMessages {
		content, calls := outputMessage(m)
		if content != nil {
			blocks = append(blocks, map[string]any{"type": "text", "text": *content})
		}
		if r := refusal(m); r != nil {
			blocks = append(blocks, map[string]any{"type": "text", "text": *r})
		}
		for _, c := range calls {
			input := json.RawMessage(c.Function.Arguments)
			if !json.Valid(input) {
				input = json.RawMessage("{}")
			}
			blocks = append(blocks, map[string]any{"type": "tool_use", "id": c.ID, "name": c.Function.Name, "input": input})
		}
	}
	return blocks
}

// anthropicStopReason maps the case-model finish reason to Anthropic's stop_reason. A refusal
// stays a refusal: an agent that checks stop_reason must not take it for a finished answer. A
// refusal part with an ordinary finish reason (OpenAI ends a refusal with "stop") is one too.
func anthropicStopReason(st *replaycase.Step) string {
	refused := false
	for _, m := range st.OutputMessages {
		refused = refused || refusal(m) != nil
		switch m.FinishReason {
		case "tool_call", "tool_use", "tool_calls":
			return "tool_use"
		case "length", "max_tokens":
			return "max_tokens"
		case "stop_sequence":
			return "stop_sequence"
		case "content_filter", "refusal": // the GenAI conventions' name, Anthropic's own (kept as recorded)
			return "refusal"
		case "pause_turn", "model_context_window_exceeded": // Anthropic's own, kept as recorded
			return m.FinishReason
		}
	}
	if refused {
		return "refusal"
	}
	return "end_turn"
}

// anthropicUsageOf gives Anthropic's usage: its input_tokens exclude cache reads and writes,
// which the case model (like the GenAI conventions) counts in input_tokens.
func anthropicUsageOf(u replaycase.Usage) anthropicUsage {
	return anthropicUsage{InputTokens: max(u.InputTokens-u.CacheReadInputTokens-u.CacheWriteInputTokens, 0), OutputTokens: u.OutputTokens,
		CacheReadInputTokens: u.CacheReadInputTokens, CacheCreationInputTokens: u.CacheWriteInputTokens}
}

func anthropicID(st *replaycase.Step) string {
	if st.ResponseID != "" {
		return st.ResponseID
	}
	return "msg_" + strings.TrimPrefix(st.CallSiteID, "cs_")
}

// messageOf is the message object of a recorded step.
func messageOf(st *replaycase.Step) anthropicMessage {
	stop := anthropicStopReason(st)
	return anthropicMessage{ID: anthropicID(st), Type: "message", Role: "assistant", Model: responseModel(st), Content: anthropicBlocks(st), StopReason: &stop,
		StopSequence: stopSequence(st, stop), Usage: anthropicUsageOf(st.Usage)}
}

// stopSequence is the stop sequence that ended the answer, as the API names it beside
// stop_reason "stop_sequence". The case model does not record which one matched, so it is named
// only when the recorded request had one; with several it is null (documented in replayext).
func stopSequence(st *replaycase.Step, stop string) *string {
	if stop != "stop_sequence" || len(st.ModelConfig.Stop) != 1 {
		return nil
	}
	return &st.ModelConfig.Stop[0]
}

// MessagesResponseJSON is the non-streaming answer of a recorded step, as the body
// WriteMessagesResponse sends. It depends on the step alone, so a caller may keep it.
func MessagesResponseJSON(st *replaycase.Step) []byte { return encodeJSON(messageOf(st)) }

// WriteMessagesResponse answers req with the recorded step: a message object, or, when req
// asked to stream, Anthropic's Server-Sent Events.
func WriteMessagesResponse(w http.ResponseWriter, req *MessagesRequest, st *replaycase.Step) {
	if !req.Stream {
		writeJSON(w, MessagesResponseJSON(st))
		return
	}
	msg := messageOf(st)
	stop := *msg.StopReason
	es := newEventStream(w)
	send := func(typ string, fields map[string]any) {
		fields["type"] = typ
		es.send(typ, fields)
	}
	start := msg
	start.Content, start.StopReason = []map[string]any{}, nil
	start.Usage.OutputTokens = 0
	send("message_start", map[string]any{"message": start})
	for i, bl := range msg.Content {
		switch bl["type"] {
		case "text":
			send("content_block_start", map[string]any{"index": i, "content_block": map[string]any{"type": "text", "text": ""}})
			send("content_block_delta", map[string]any{"index": i, "delta": map[string]any{"type": "text_delta", "text": bl["text"]}})
		case "tool_use":
			send("content_block_start", map[string]any{"index": i, "content_block": map[string]any{"type": "tool_use", "id": bl["id"], "name": bl["name"], "input": map[string]any{}}})
			send("content_block_delta", map[string]any{"index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": string(bl["input"].(json.RawMessage))}})
		}
		send("content_block_stop", map[string]any{"index": i})
	}
	send("message_delta", map[string]any{"delta": map[string]any{"stop_reason": stop, "stop_sequence": msg.StopSequence}, "usage": map[string]any{"output_tokens": msg.Usage.OutputTokens}})
	send("message_stop", map[string]any{})
}
