package wireapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"

	jsonv1 "github.com/go-json-experiment/json/v1"

	"github.com/reprise-dev/reprise/internal/jsonany"
	"github.com/reprise-dev/reprise/replaycase"
)

// OpenAI Chat Completions (POST /v1/chat/completions).

// ChatRequest is what a Chat Completions request says about a model call, in the case
// model's terms, plus how the caller wants the answer delivered.
type ChatRequest struct {
	Messages []replaycase.Message
	Tools    []replaycase.ToolDefinition
	// Params holds the model and the sampling parameters (RequestModel is the body's model).
	Params replaycase.ModelConfig
	// Stream is true when the caller asked for Server-Sent Events.
	Stream bool
	// IncludeUsage is stream_options.include_usage: a final chunk carries the usage.
	IncludeUsage bool
	// Version1 is the request as call-site id version 1 read it, when that differs from the
	// fields above, else nil. Version 1 did not read legacy function calling (an assistant
	// message's function_call, the functions list, the top-level function_call); ids recorded
	// with it must keep matching, so the replay canonicalizes a field set without the version
	// marker from this reading (callsite.Request.Version1).
	Version1 *ChatReading

	// schemas are the tools' parameter schemas, as sent; ReadToolSchemas decodes them. Replay
	// matches tools by name, so the live path never pays for them.
	schemas []json.RawMessage
}

// ChatReading is the case-model part of a ChatRequest.
type ChatReading struct {
	Messages []replaycase.Message
	Tools    []replaycase.ToolDefinition
	Params   replaycase.ModelConfig
}

// ReadToolSchemas sets each tool definition's Parameters to its schema as the case model keeps
// it (compact JSON, sorted keys).
func (r *ChatRequest) ReadToolSchemas() error {
	for i, raw := range r.schemas {
		var err error
		if r.Tools[i].Parameters, err = rawText(raw, fmt.Sprintf("tools[%d].function.parameters", i)); err != nil {
			return err
		}
	}
	return nil
}

// chatBody is the wire shape of a request. Fields whose JSON type varies (content, stop,
// tool_choice, arguments, schemas) stay raw and are read by the conversion below, which
// knows their path for error messages. Fields not listed are accepted and ignored, as the
// API's own optional fields are.
type chatBody struct {
	Model               *string         `json:"model"`
	Messages            []*chatMessage  `json:"messages"`
	Tools               []*chatTool     `json:"tools"`
	Functions           []*chatFunction `json:"functions"` // legacy function calling: the functions offered
	Temperature         *float64        `json:"temperature"`
	TopP                *float64        `json:"top_p"`
	MaxTokens           *int64          `json:"max_tokens"`
	MaxCompletionTokens *int64          `json:"max_completion_tokens"`
	MaxOutputTokens     *int64          `json:"max_output_tokens"` // the Responses API spelling, found in recorded invocation parameters
	Seed                *int64          `json:"seed"`
	N                   *int64          `json:"n"`
	TopK                *int64          `json:"top_k"` // not OpenAI's: vLLM's, and Anthropic's in recorded invocation parameters
	FrequencyPenalty    *float64        `json:"frequency_penalty"`
	PresencePenalty     *float64        `json:"presence_penalty"`
	ResponseFormat      json.RawMessage `json:"response_format"`
	Stop                json.RawMessage `json:"stop"`
	ToolChoice          json.RawMessage `json:"tool_choice"`
	FunctionCall        json.RawMessage `json:"function_call"` // legacy tool_choice: "none", "auto" or {"name": …}
	Stream              *bool           `json:"stream"`
	StreamOptions       *chatStreamOpts `json:"stream_options"`
	// The reasoning settings (reasoning.go): Chat's own, and, in recorded invocation
	// parameters, the Responses API's reasoning and Anthropic's thinking. Not embedded, so
	// that a decoding error names the member alone.
	ReasoningEffort *string          `json:"reasoning_effort"`
	Reasoning       *reasoningObject `json:"reasoning"`
	Thinking        json.RawMessage  `json:"thinking"`
	OutputConfig    json.RawMessage  `json:"output_config"` // Anthropic's, in recorded parameters and bodies: its effort
	// The tool and output settings (request_settings.go), and the Responses API's text object
	// of recorded invocation parameters, for its verbosity.
	ParallelToolCalls *bool           `json:"parallel_tool_calls"`
	Verbosity         *string         `json:"verbosity"`
	LogitBias         json.RawMessage `json:"logit_bias"`
	Text              *responsesText  `json:"text"`
}

type chatStreamOpts struct {
	IncludeUsage *bool `json:"include_usage"`
}

type chatMessage struct {
	Role       *string         `json:"role"`
	Name       string          `json:"name"`
	Content    json.RawMessage `json:"content"`
	ToolCalls  []*chatToolCall `json:"tool_calls"`
	ToolCallID string          `json:"tool_call_id"`
	// FunctionCall is legacy function calling's one call of an assistant message.
	FunctionCall *chatFunction `json:"function_call"`
}

type chatToolCall struct {
	ID       string          `json:"id"`
	Type     string          `json:"type"`
	Function *chatFunction   `json:"function"`
	Name     string          `json:"name"`      // flat shape some instrumentations record
	Args     json.RawMessage `json:"arguments"` // flat shape some instrumentations record
}

type chatFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Arguments   json.RawMessage `json:"arguments"`
	Parameters  json.RawMessage `json:"parameters"`
}

type chatTool struct {
	Type     string        `json:"type"`
	Function *chatFunction `json:"function"`
}

type chatContentPart struct {
	Type *string `json:"type"`
	Text *string `json:"text"`
	// ImageURL is {"url": …} in a Chat Completions image_url part, the URL itself in a
	// Responses input_image part (which may name an uploaded file_id instead).
	ImageURL json.RawMessage `json:"image_url"`
	FileID   json.RawMessage `json:"file_id"`
}

// chatRoles are the roles the API accepts, with the case model's name for each.
var chatRoles = map[string]string{
	"system":    "system",
	"developer": "system", // the o-series name for system instructions
	"user":      "user",
	"assistant": "assistant",
	"tool":      "tool",
	"function":  "tool", // legacy function results
}

// ParseChatRequest reads a Chat Completions request body strictly: a JSON object with a model
// and a non-empty messages array, every field the API documents of its documented type. It
// is the one reader of request bodies: the replay endpoint reads live requests with it and
// normalize reads the bodies instrumentations recorded. Errors are *RequestError.
func ParseChatRequest(body []byte) (*ChatRequest, error) {
	var b chatBody
	if err := decodeObject(body, &b); err != nil {
		return nil, err
	}
	if b.Model == nil || *b.Model == "" {
		return nil, missing("model")
	}
	if b.Messages == nil {
		return nil, missing("messages")
	}
	if len(b.Messages) == 0 {
		return nil, invalidValue("messages", "a non-empty array")
	}
	r := &ChatRequest{}
	var err error
	if r.Params, err = b.params(); err != nil {
		return nil, err
	}
	var legacyCalls []int // the messages whose last part is a legacy function_call
	for i, m := range b.Messages {
		msg, legacy, err := m.caseMessage(fmt.Sprintf("messages[%d]", i))
		if err != nil {
			return nil, err
		}
		if legacy {
			legacyCalls = append(legacyCalls, i)
		}
		r.Messages = append(r.Messages, msg)
	}
	for i, t := range b.Tools {
		param := fmt.Sprintf("tools[%d]", i)
		if t == nil || t.Function == nil {
			return nil, missing(param + ".function")
		}
		if t.Function.Name == "" {
			return nil, missing(param + ".function.name")
		}
		d := replaycase.ToolDefinition{Type: t.Type, Name: t.Function.Name, Description: t.Function.Description}
		if d.Type == "" {
			d.Type = "function"
		}
		if k := kind(t.Function.Parameters); k != 0 && k != 'n' && k != '{' {
			return nil, invalidType(param+".function.parameters", "an object")
		}
		r.Tools = append(r.Tools, d)
		r.schemas = append(r.schemas, t.Function.Parameters)
	}
	// Legacy function calling offers its tools as functions: read after tools, as tools.
	for i, f := range b.Functions {
		param := fmt.Sprintf("functions[%d]", i)
		if f == nil || f.Name == "" {
			return nil, missing(param + ".name")
		}
		if k := kind(f.Parameters); k != 0 && k != 'n' && k != '{' {
			return nil, invalidType(param+".parameters", "an object")
		}
		r.Tools = append(r.Tools, replaycase.ToolDefinition{Type: "function", Name: f.Name, Description: f.Description})
		r.schemas = append(r.schemas, f.Parameters)
	}
	legacyChoice := legacyToolChoice(&b)
	if len(legacyCalls) > 0 || len(b.Functions) > 0 || legacyChoice {
		r.Version1 = r.version1(legacyCalls, len(b.Tools), legacyChoice)
	}
	r.Stream = b.Stream != nil && *b.Stream
	r.IncludeUsage = b.StreamOptions != nil && b.StreamOptions.IncludeUsage != nil && *b.StreamOptions.IncludeUsage
	return r, nil
}

// version1 is the request without what version 1 did not read: each legacy function_call (the
// last part of its message), the functions (the tools after the first nTools), and the
// tool_choice a legacy function_call gave.
func (r *ChatRequest) version1(legacyCalls []int, nTools int, legacyChoice bool) *ChatReading {
	v1 := &ChatReading{Messages: slices.Clone(r.Messages), Tools: r.Tools[:nTools:nTools], Params: r.Params}
	for _, i := range legacyCalls {
		n := len(v1.Messages[i].Parts) - 1
		v1.Messages[i].Parts = v1.Messages[i].Parts[:n:n]
	}
	if legacyChoice {
		v1.Params.ToolChoice = ""
	}
	return v1
}

// legacyToolChoice says whether the tool choice is legacy function calling's function_call
// ("none", "auto" or {"name": …}): read as tool_choice when there is no tool_choice.
func legacyToolChoice(b *chatBody) bool {
	noChoice := kind(b.ToolChoice) == 0 || kind(b.ToolChoice) == 'n'
	return noChoice && kind(b.FunctionCall) != 0 && kind(b.FunctionCall) != 'n'
}

// ParseChatParams reads the model and sampling parameters from a body that may hold nothing
// else (OpenInference records them apart, in llm.invocation_parameters).
func ParseChatParams(body []byte) (replaycase.ModelConfig, error) {
	var b chatBody
	if err := decodeObject(body, &b); err != nil {
		return replaycase.ModelConfig{}, err
	}
	return b.params()
}

func (b *chatBody) params() (replaycase.ModelConfig, error) {
	mc := replaycase.ModelConfig{Temperature: b.Temperature, TopP: b.TopP, Seed: b.Seed, ChoiceCount: b.N, TopK: b.TopK,
		FrequencyPenalty: b.FrequencyPenalty, PresencePenalty: b.PresencePenalty}
	if b.Model != nil {
		mc.RequestModel = *b.Model
	}
	for _, n := range []*int64{b.MaxTokens, b.MaxCompletionTokens, b.MaxOutputTokens} {
		if n != nil {
			mc.MaxTokens = n
			break
		}
	}
	var err error
	switch kind(b.Stop) {
	case 0, 'n':
	case '"':
		var s string
		_ = json.Unmarshal(b.Stop, &s)
		mc.Stop = []string{s}
	case '[':
		var stop []*string
		if json.Unmarshal(b.Stop, &stop) != nil {
			return mc, invalidType("stop", "a string or an array of strings")
		}
		if mc.Stop, err = stopStrings(stop, "stop"); err != nil {
			return mc, err
		}
	default:
		return mc, invalidType("stop", "a string or an array of strings")
	}
	if legacyToolChoice(b) {
		mc.ToolChoice, err = rawText(b.FunctionCall, "function_call")
	} else {
		mc.ToolChoice, err = rawText(b.ToolChoice, "tool_choice")
	}
	if err != nil {
		return mc, err
	}
	if mc.ResponseFormat, mc.OutputType, err = outputFormat(b.ResponseFormat, "response_format"); err != nil {
		return mc, err
	}
	reasoning := reasoningFields{ReasoningEffort: b.ReasoningEffort, Reasoning: b.Reasoning, Thinking: b.Thinking, OutputConfig: b.OutputConfig}
	if err = reasoning.read(&mc); err != nil {
		return mc, err
	}
	return mc, requestSettings{b.ParallelToolCalls, b.Verbosity, b.LogitBias}.read(&mc, b.Text)
}

// stopStrings reads a stop sequence array. A null in it is refused, naming its index, as the
// API refuses it: read as "", it would be a stop sequence the caller never sent, and a request
// with ["a", null] would match a recording of ["a", ""].
func stopStrings(stop []*string, param string) ([]string, error) {
	out := make([]string, len(stop))
	for i, s := range stop {
		if s == nil {
			return nil, invalidType(fmt.Sprintf("%s[%d]", param, i), "a string")
		}
		out[i] = *s
	}
	return out, nil
}

// caseMessage reads one message; legacy says whether its last part is a legacy function_call.
func (m *chatMessage) caseMessage(param string) (msg replaycase.Message, legacy bool, err error) {
	if m == nil {
		return msg, false, invalidType(param, "an object")
	}
	if m.Role == nil {
		return msg, false, missing(param + ".role")
	}
	role, ok := chatRoles[*m.Role]
	if !ok {
		return msg, false, invalidValue(param+".role", "one of system, developer, user, assistant, tool, function")
	}
	msg = replaycase.Message{Role: role, Name: m.Name}
	if role == "tool" && m.ToolCallID != "" {
		result, err := rawText(m.Content, param+".content")
		if err != nil {
			return msg, false, err
		}
		msg.Parts = []replaycase.Part{{Type: "tool_call_response", ID: m.ToolCallID, Response: result}}
		return msg, false, nil
	}
	parts, err := contentParts(m.Content, param+".content")
	if err != nil {
		return msg, false, err
	}
	msg.Parts = parts
	for i, tc := range m.ToolCalls {
		p, err := tc.casePart(fmt.Sprintf("%s.tool_calls[%d]", param, i))
		if err != nil {
			return msg, false, err
		}
		msg.Parts = append(msg.Parts, p)
	}
	if fc := m.FunctionCall; fc != nil {
		// Legacy function calling: the call is a tool call without an id, last, as OpenInference
		// records it (message.function_call_name); its result comes back in a "function" message,
		// read as a tool message with the function's name.
		args, err := rawText(fc.Arguments, param+".function_call.arguments")
		if err != nil {
			return msg, false, err
		}
		msg.Parts = append(msg.Parts, replaycase.Part{Type: "tool_call", Name: fc.Name, Arguments: args})
		return msg, true, nil
	}
	return msg, false, nil
}

func (tc *chatToolCall) casePart(param string) (replaycase.Part, error) {
	if tc == nil {
		return replaycase.Part{}, invalidType(param, "an object")
	}
	p := replaycase.Part{Type: "tool_call", ID: tc.ID, Name: tc.Name}
	args := tc.Args
	if tc.Function != nil {
		p.Name, args = tc.Function.Name, tc.Function.Arguments
	}
	var err error
	p.Arguments, err = rawText(args, param+".function.arguments")
	return p, err
}

// contentParts reads a message's content: null, a string, or an array of content parts.
func contentParts(raw json.RawMessage, param string) ([]replaycase.Part, error) {
	switch kind(raw) {
	case 0, 'n':
		return nil, nil
	case '"':
		var s string
		_ = json.Unmarshal(raw, &s)
		if s == "" {
			return nil, nil
		}
		return []replaycase.Part{{Type: "text", Content: s}}, nil
	case '[':
	default:
		return nil, invalidType(param, "a string or an array of content parts")
	}
	var items []json.RawMessage
	_ = json.Unmarshal(raw, &items)
	out := make([]replaycase.Part, 0, len(items))
	for i, item := range items {
		p := fmt.Sprintf("%s[%d]", param, i)
		var cp chatContentPart
		if kind(item) != '{' || json.Unmarshal(item, &cp) != nil {
			return nil, invalidType(p, "an object with a type")
		}
		if cp.Type == nil {
			return nil, missing(p + ".type")
		}
		switch t := *cp.Type; t {
		case "text", "input_text", "output_text":
			if cp.Text == nil {
				return nil, missing(p + ".text")
			}
			out = append(out, replaycase.Part{Type: "text", Content: *cp.Text})
		case "image_url":
			var image struct {
				URL string `json:"url"`
			}
			switch kind(cp.ImageURL) {
			case 0, 'n':
				return nil, missing(p + ".image_url")
			case '{':
				if json.Unmarshal(cp.ImageURL, &image) != nil {
					return nil, invalidType(p+".image_url.url", "a string")
				}
			default:
				return nil, invalidType(p+".image_url", "an object with a url")
			}
			if image.URL == "" { // read as no part, the image would be dropped from the request
				return nil, missing(p + ".image_url.url")
			}
			out = append(out, replaycase.Part{Type: "uri", Modality: "image", URI: image.URL})
		case "input_image": // Responses: an image by URL (image_url is the URL itself) or by uploaded file
			var url, fileID string
			_ = json.Unmarshal(cp.ImageURL, &url) // "" unless a string
			_ = json.Unmarshal(cp.FileID, &fileID)
			switch {
			case url != "":
				out = append(out, replaycase.Part{Type: "uri", Modality: "image", URI: url})
			case fileID != "":
				out = append(out, replaycase.Part{Type: "file", Modality: "image", FileID: fileID})
			default:
				return nil, missing(p + ".image_url")
			}
		default: // audio, files, refusals…: kept whole, as recorded
			text, _ := rawText(item, p)
			out = append(out, replaycase.Part{Type: t, Content: text})
		}
	}
	return out, nil
}

// decodeObject decodes a JSON object into v, turning decoding failures into request errors
// that name the field and never quote the body.
func decodeObject(body []byte, v any) error {
	if kind(body) != '{' {
		if len(bytes.TrimSpace(body)) == 0 {
			return &RequestError{Code: "invalid_json", Message: "The request body is empty; expected a JSON object."}
		}
		if json.Valid(body) {
			return &RequestError{Code: "invalid_type", Message: "The request body must be a JSON object."}
		}
		return &RequestError{Code: "invalid_json", Message: "The request body is not valid JSON."}
	}
	// go-json-experiment/json/v1 is encoding/json's behaviour (case-insensitive names, U+FFFD
	// for invalid UTF-8, the same accepted inputs) on the encoding/json/v2 decoder, with half the
	// allocations (BenchmarkDecodeObject); the request body is the replay endpoint's hottest input,
	// and normalize parses every recorded request with it. Its errors name fields differently, so
	// a body it refuses is decoded again, from scratch, by encoding/json, whose error names the
	// field (refusals are the slow path). FuzzFastDecoderAgreesWithEncodingJSON checks that the
	// two accept the same bodies and decode them to the same values.
	if jsonv1.Unmarshal(body, v) == nil {
		return nil
	}
	reflect.ValueOf(v).Elem().SetZero() // what the failed decode filled in must not leak into the retry
	dec := json.NewDecoder(bytes.NewReader(body))
	err := dec.Decode(v)
	if err == nil {
		if _, extra := dec.Token(); extra != io.EOF {
			return &RequestError{Code: "invalid_json", Message: "The request body has data after the JSON object."}
		}
		return nil
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return invalidType(te.Field, jsonTypeName(te.Type))
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return &RequestError{Code: "invalid_json", Message: "The request body is not valid JSON (at byte " + strconv.FormatInt(se.Offset, 10) + ")."}
	}
	return &RequestError{Code: "invalid_json", Message: "The request body is not valid JSON."}
}

// jsonTypeName says which JSON type a Go field wants, for error messages.
func jsonTypeName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Bool:
		return "a boolean"
	case reflect.String:
		return "a string"
	case reflect.Slice:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Int64, reflect.Int:
		return "an integer"
	case reflect.Float64:
		return "a number"
	}
	return "another type"
}

// kind is the first byte of a JSON value ('{', '[', '"', 'n', 't', 'f' or a digit), 0 when empty.
func kind(raw []byte) byte {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return 0
	}
	return raw[0]
}

// rawText is a JSON value as the case model keeps it: a string as itself, null as "", any
// other value as compact JSON with sorted keys and its numbers as written.
func rawText(raw json.RawMessage, param string) (string, error) {
	switch kind(raw) {
	case 0, 'n':
		return "", nil
	case '"':
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return "", invalidType(param, "a string")
		}
		return s, nil
	}
	if text, ok := jsonany.Canonical(raw); ok {
		return text, nil // the same text as below, without encoding/json's reflection
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return "", invalidType(param, "a JSON value")
	}
	text, err := jsonany.Marshal(v)
	if err != nil {
		return "", invalidType(param, "a JSON value")
	}
	return text, nil
}

// Rendering a recorded step as a Chat Completions response.

type chatCompletion struct {
	ID      string       `json:"id"`
	Object  string       `json:"object"`
	Created int64        `json:"created"`
	Model   string       `json:"model"`
	Choices []chatChoice `json:"choices"`
	Usage   *chatUsage   `json:"usage,omitempty"`
}

type chatChoice struct {
	Index        int              `json:"index"`
	Message      *chatOutMessage  `json:"message,omitempty"`
	Delta        *chatDelta       `json:"delta,omitempty"`
	FinishReason *string          `json:"finish_reason"`
	Logprobs     *json.RawMessage `json:"logprobs"` // always null: logprobs are not recorded
}

// chatOutMessage is a full answer: content is null when the model answered with tool calls only.
type chatOutMessage struct {
	Role      string        `json:"role"`
	Content   *string       `json:"content"`
	Refusal   *string       `json:"refusal,omitempty"`
	ToolCalls []chatOutCall `json:"tool_calls,omitempty"`
}

// chatDelta is one streamed piece of an answer.
type chatDelta struct {
	Role      string        `json:"role,omitempty"`
	Content   *string       `json:"content,omitempty"`
	Refusal   *string       `json:"refusal,omitempty"`
	ToolCalls []chatOutCall `json:"tool_calls,omitempty"`
}

type chatOutCall struct {
	Index    *int   `json:"index,omitempty"`
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type chatUsage struct {
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
	TotalTokens      int64 `json:"total_tokens"`
}

// WriteChatResponse answers req with the recorded step: a chat.completion object, or, when
// req asked to stream, Server-Sent Events.
func WriteChatResponse(w http.ResponseWriter, req *ChatRequest, st *replaycase.Step) {
	if req.Stream {
		writeChatStream(w, st, req.IncludeUsage)
		return
	}
	writeJSON(w, ChatResponseJSON(st))
}

// ChatResponseJSON is the non-streaming Chat Completions answer of a recorded step, as the
// body WriteChatResponse sends (newline-terminated JSON, HTML characters unescaped). It
// depends on the step alone, so a caller may keep it.
func ChatResponseJSON(st *replaycase.Step) []byte {
	out := chatCompletion{ID: responseID(st), Object: "chat.completion", Created: st.StartTime.Unix(), Model: responseModel(st), Choices: make([]chatChoice, 0, len(st.OutputMessages)), Usage: usage(st.Usage)}
	for i, m := range st.OutputMessages {
		content, calls := outputMessage(m)
		finish := finishReason(m.FinishReason)
		out.Choices = append(out.Choices, chatChoice{Index: i, Message: &chatOutMessage{Role: "assistant", Content: content, Refusal: refusal(m), ToolCalls: calls}, FinishReason: &finish})
	}
	return encodeJSON(out)
}

// writeChatStream sends the recorded response as Chat Completions Server-Sent Events: the
// role, the content, each tool call (id and name, then arguments), the finish reason, the
// usage chunk when asked for, and [DONE].
func writeChatStream(w http.ResponseWriter, st *replaycase.Step, includeUsage bool) {
	es := newEventStream(w)
	send := func(c chatCompletion) {
		c.ID, c.Object, c.Created, c.Model = responseID(st), "chat.completion.chunk", st.StartTime.Unix(), responseModel(st)
		es.send("", c)
	}
	delta := func(i int, d chatDelta, finish *string) chatCompletion {
		return chatCompletion{Choices: []chatChoice{{Index: i, Delta: &d, FinishReason: finish}}}
	}
	empty := ""
	for i, m := range st.OutputMessages {
		content, calls := outputMessage(m)
		// The API opens a text answer with content "" and a tool-call-only one without content
		// (null): the SDKs' stream helpers then read the same message as the JSON answer.
		opening := chatDelta{Role: "assistant"}
		if content != nil {
			opening.Content = &empty
		}
		send(delta(i, opening, nil))
		if content != nil {
			send(delta(i, chatDelta{Content: content}, nil))
		}
		if r := refusal(m); r != nil {
			send(delta(i, chatDelta{Refusal: r}, nil))
		}
		for j, tc := range calls {
			head := tc
			head.Index, head.Function.Arguments = &j, ""
			send(delta(i, chatDelta{ToolCalls: []chatOutCall{head}}, nil))
			var args chatOutCall
			args.Index, args.Function.Arguments = &j, tc.Function.Arguments
			send(delta(i, chatDelta{ToolCalls: []chatOutCall{args}}, nil))
		}
		finish := finishReason(m.FinishReason)
		send(delta(i, chatDelta{}, &finish))
	}
	if includeUsage {
		send(chatCompletion{Choices: []chatChoice{}, Usage: usage(st.Usage)})
	}
	es.raw([]byte("data: [DONE]\n\n"))
}

// outputMessage renders a recorded output message's text and tool calls.
func outputMessage(m replaycase.Message) (content *string, calls []chatOutCall) {
	var text []string
	for _, p := range m.Parts {
		switch p.Type {
		case "tool_call":
			var tc chatOutCall
			tc.ID, tc.Type = p.ID, "function"
			tc.Function.Name, tc.Function.Arguments = p.Name, p.Arguments
			calls = append(calls, tc)
		case "text", "output_text": // output_text: the Responses part type, as OpenInference records it
			text = append(text, p.Content)
		}
	}
	if len(text) > 0 && !refusedInText(m) {
		s := strings.Join(text, "")
		content = &s
	}
	return content, calls
}

// refusedInText reports a refusal recorded as text: Anthropic has no refusal block, so a
// refusing Claude model writes its words as text and ends with stop_reason "refusal", which the
// case model keeps as the message's finish reason. Rendered for OpenAI, those words are the
// message's refusal, not its content, as an OpenAI model's refusal would be.
func refusedInText(m replaycase.Message) bool {
	if m.FinishReason != "refusal" {
		return false
	}
	for _, p := range m.Parts {
		if p.Type == "refusal" {
			return false
		}
	}
	return true
}

// refusal is a recorded output message's refusal text (the API's message.refusal, recorded as
// a refusal part), or nil: the agent must see the model refuse, not an empty answer.
func refusal(m replaycase.Message) *string {
	inText := refusedInText(m)
	var text []string
	for _, p := range m.Parts {
		if p.Type == "refusal" || inText && (p.Type == "text" || p.Type == "output_text") {
			text = append(text, p.Content)
		}
	}
	if len(text) == 0 {
		return nil
	}
	s := strings.Join(text, "")
	return &s
}

// finishReason maps a case-model finish reason back to the Chat Completions value. The case
// model keeps Anthropic's own reasons as recorded (a step recorded through the Messages API may
// be replayed through Chat Completions); they become the Chat value an OpenAI model would end
// the same answer with, so an agent that checks finish_reason sees one of the API's values.
func finishReason(f string) string {
	switch f {
	case "tool_call":
		return "tool_calls"
	case "", "stop_sequence", "pause_turn", "refusal": // a refusal's words are message.refusal
		return "stop"
	case "model_context_window_exceeded":
		return "length"
	}
	return f
}

func responseID(st *replaycase.Step) string {
	if st.ResponseID != "" {
		return st.ResponseID
	}
	return "chatcmpl-" + strings.TrimPrefix(st.CallSiteID, "cs_")
}

func responseModel(st *replaycase.Step) string {
	if st.ModelConfig.ResponseModel != "" {
		return st.ModelConfig.ResponseModel
	}
	return st.ModelConfig.RequestModel
}

func usage(u replaycase.Usage) *chatUsage {
	return &chatUsage{PromptTokens: u.InputTokens, CompletionTokens: u.OutputTokens, TotalTokens: u.TotalTokens}
}
