// Package callsite computes call-site IDs: a stable hash over the canonical form of a model
// request, computed identically from recorded telemetry (a case step, whatever convention it
// came from) and from a live OpenAI Chat Completions request body. docs/call-site-id.md
// specifies the algorithm.
package callsite

import (
	"encoding/json"
	"math"
	"sort"
	"strings"

	"github.com/gowebpki/jcs"

	"github.com/reprise-dev/reprise/replaycase"
)

// Version is the version of the canonical form of a field set without FieldV2, the form of
// every id recorded before version 2 existed. Every canonical form carries its version ("v").
const Version = 1

// Version2 is the form of a field set that lists FieldV2 (docs/call-site-id.md, "Algorithm
// (version 2)"): legacy function calling is read, and a tool result sent as an array of text
// parts is its text.
const Version2 = 2

// Optional fields of a request. A recorded step names the ones its telemetry recorded; a live
// request is canonicalized with the same names, so that a parameter the instrumentation did
// not record cannot make a replay miss.
const (
	FieldTools       = "tools"
	FieldTemperature = "temperature"
	FieldTopP        = "top_p"
	FieldMaxTokens   = "max_tokens"
	FieldSeed        = "seed"
	FieldStop        = "stop"
	FieldToolChoice  = "tool_choice"

	// The fields of the output asked for and of the sampling beyond temperature and top_p. A
	// recording lists them only when it has them, so that every id recorded before they were
	// read keeps its field set and its value. n = 1, output_type "text" and a response_format
	// of type "text" are the APIs' defaults: in the id they are the field left out, so that an
	// instrumentation that records the default (Agent Framework records n = 1) still matches a
	// request that does not send it.
	FieldFrequencyPenalty = "frequency_penalty"
	FieldPresencePenalty  = "presence_penalty"
	FieldTopK             = "top_k"
	FieldChoiceCount      = "n"
	FieldOutputType       = "output_type"
	FieldResponseFormat   = "response_format"

	// The reasoning settings, listed, as the fields above, only by a recording that has them.
	// Anthropic's thinking {"type":"disabled"} is the API's default, the field left out.
	FieldReasoningEffort  = "reasoning_effort"
	FieldReasoningSummary = "reasoning_summary"
	FieldThinking         = "thinking"

	// The tool and output settings, listed, as the fields above, only by a recording that has
	// them. parallel_tool_calls true and an empty logit_bias are the APIs' defaults, the field
	// left out.
	FieldParallelToolCalls = "parallel_tool_calls"
	FieldVerbosity         = "verbosity"
	FieldLogitBias         = "logit_bias"

	// FieldIsError covers the failure mark of a tool result (Anthropic's tool_result
	// is_error): a tool message sent as a failure has "is_error": true, one sent as a success
	// nothing, so that an id of a request without failures is the id it had before the mark
	// was read. A recording lists it when its telemetry records the mark
	// (Request.ToolErrorsRecorded) or holds a failed result; one that does not cannot tell a
	// failure from a success, and a live request's mark is ignored for it, as any unrecorded
	// field is.
	FieldIsError = "is_error"

	// FieldV2 is not a request field but the version marker: a recorded step lists it in
	// call_site_fields when its id is of version 2. The version travels with the field set, so
	// a step of an old dataset (no marker) keeps its version-1 id, and a live request, which is
	// canonicalized once per field set of the datasets, gets each recording's version.
	FieldV2 = "v2"
)

// Request is a model request in the case model's terms.
type Request struct {
	Model    string
	System   []replaycase.Part // separately recorded system instructions, if any
	Messages []replaycase.Message
	Tools    []replaycase.ToolDefinition
	Params   replaycase.ModelConfig

	// Version1 is the request as version 1 read it, when that differs from the fields above:
	// version 1 did not read legacy function calling (wireapi.ChatRequest.Version1), and ids
	// recorded with it must keep matching. The version-1 form uses it; version 2 ignores it.
	// nil: version 1 reads the fields above.
	Version1 *Request

	// ToolErrorsRecorded says the request was read from a source that records the failure
	// mark of a tool result (an Anthropic request body, the Vercel AI SDK's prompt): a result without the mark was sent
	// as a success, so RecordedFields lists FieldIsError even when no result failed.
	ToolErrorsRecorded bool
}

// FromStep is the request of a recorded LLM step.
func FromStep(st *replaycase.Step) Request {
	return Request{Model: st.ModelConfig.RequestModel, System: st.SystemInstructions, Messages: st.InputMessages, Tools: st.ToolDefinitions, Params: st.ModelConfig}
}

// RecordedFields lists the optional fields a request carries, sorted, and the version marker
// FieldV2: a step recorded now gets a version-2 id.
func (r Request) RecordedFields() []string {
	var f []string
	add := func(ok bool, name string) {
		if ok {
			f = append(f, name)
		}
	}
	p := r.Params
	add(p.MaxTokens != nil, FieldMaxTokens)
	add(p.Seed != nil, FieldSeed)
	add(len(p.Stop) > 0, FieldStop)
	add(p.Temperature != nil, FieldTemperature)
	add(p.ToolChoice != "", FieldToolChoice)
	add(len(r.Tools) > 0, FieldTools)
	add(p.TopP != nil, FieldTopP)
	add(p.FrequencyPenalty != nil, FieldFrequencyPenalty)
	add(p.PresencePenalty != nil, FieldPresencePenalty)
	add(p.TopK != nil, FieldTopK)
	add(p.ChoiceCount != nil, FieldChoiceCount)
	add(p.OutputType != "", FieldOutputType)
	add(p.ResponseFormat != "", FieldResponseFormat)
	add(p.ReasoningEffort != "", FieldReasoningEffort)
	add(p.ReasoningSummary != "", FieldReasoningSummary)
	add(p.Thinking != "", FieldThinking)
	add(p.ParallelToolCalls != nil, FieldParallelToolCalls)
	add(p.Verbosity != "", FieldVerbosity)
	add(p.LogitBias != "", FieldLogitBias)
	add(r.ToolErrorsRecorded || hasFailedToolResult(r.Messages), FieldIsError)
	f = append(f, FieldV2)
	sort.Strings(f)
	return f
}

// hasFailedToolResult reports whether a tool result among msgs is marked as a failure.
func hasFailedToolResult(msgs []replaycase.Message) bool {
	for _, m := range msgs {
		for _, p := range m.Parts {
			if p.Type == "tool_call_response" && p.Error {
				return true
			}
		}
	}
	return false
}

// Canonical is the canonical form of r restricted to the optional fields named, as a JSON
// value (maps, slices, strings, float64).
func (r Request) Canonical(fields []string) map[string]any {
	use := map[string]bool{}
	for _, f := range fields {
		use[f] = true
	}
	r, version := r.reading(use[FieldV2])
	v2 := version == Version2
	c := map[string]any{"v": float64(version), "model": r.Model, "messages": canonicalMessages(r.System, r.Messages, v2, use[FieldIsError])}
	p := r.Params
	if use[FieldTools] {
		// By name, in order: instrumentations record descriptions and schemas unevenly
		// (semconv recommends against them), so they would make recordings miss.
		tools := make([]any, 0, len(r.Tools))
		for _, t := range r.Tools {
			tools = append(tools, t.Name)
		}
		c[FieldTools] = tools
	}
	if use[FieldTemperature] && p.Temperature != nil {
		c[FieldTemperature] = canonicalNumber(*p.Temperature)
	}
	if use[FieldTopP] && p.TopP != nil {
		c[FieldTopP] = canonicalNumber(*p.TopP)
	}
	if use[FieldMaxTokens] && p.MaxTokens != nil {
		c[FieldMaxTokens] = float64(*p.MaxTokens)
	}
	if use[FieldSeed] && p.Seed != nil {
		c[FieldSeed] = float64(*p.Seed)
	}
	if use[FieldStop] && len(p.Stop) > 0 {
		stop := make([]any, len(p.Stop))
		for i, s := range p.Stop {
			stop[i] = s
		}
		c[FieldStop] = stop
	}
	if use[FieldToolChoice] && p.ToolChoice != "" {
		c[FieldToolChoice] = jsonValue(p.ToolChoice)
	}
	if use[FieldFrequencyPenalty] && p.FrequencyPenalty != nil {
		c[FieldFrequencyPenalty] = canonicalNumber(*p.FrequencyPenalty)
	}
	if use[FieldPresencePenalty] && p.PresencePenalty != nil {
		c[FieldPresencePenalty] = canonicalNumber(*p.PresencePenalty)
	}
	if use[FieldTopK] && p.TopK != nil {
		c[FieldTopK] = float64(*p.TopK)
	}
	if use[FieldChoiceCount] && p.ChoiceCount != nil && *p.ChoiceCount != 1 {
		c[FieldChoiceCount] = float64(*p.ChoiceCount)
	}
	if use[FieldOutputType] && p.OutputType != "" && p.OutputType != "text" {
		c[FieldOutputType] = p.OutputType
	}
	if use[FieldResponseFormat] {
		if format, ok := responseFormat(p.ResponseFormat); ok {
			c[FieldResponseFormat] = format
		}
	}
	if use[FieldReasoningEffort] && p.ReasoningEffort != "" {
		c[FieldReasoningEffort] = p.ReasoningEffort
	}
	if use[FieldReasoningSummary] && p.ReasoningSummary != "" {
		c[FieldReasoningSummary] = p.ReasoningSummary
	}
	if use[FieldThinking] {
		if thinking, ok := thinking(p.Thinking); ok {
			c[FieldThinking] = thinking
		}
	}
	if use[FieldParallelToolCalls] && p.ParallelToolCalls != nil && !*p.ParallelToolCalls {
		c[FieldParallelToolCalls] = false
	}
	if use[FieldVerbosity] && p.Verbosity != "" {
		c[FieldVerbosity] = p.Verbosity
	}
	if use[FieldLogitBias] {
		if bias, ok := logitBias(p.LogitBias); ok {
			c[FieldLogitBias] = bias
		}
	}
	return c
}

// logitBias is a recorded logit_bias as the id reads it: its JSON value, and whether it biases
// any token (an empty one is the API's default, no bias).
func logitBias(s string) (any, bool) {
	v := jsonValue(s)
	if m, ok := v.(map[string]any); s == "" || ok && len(m) == 0 {
		return nil, false
	}
	return v, true
}

// responseFormat is a recorded response format as the id reads it: its JSON value, and
// whether it asks for anything but text.
func responseFormat(s string) (any, bool) { return unlessDefault(s, "text") }

// thinking is a recorded thinking object as the id reads it: its JSON value, and whether it
// asks for anything but the default, thinking disabled.
func thinking(s string) (any, bool) { return unlessDefault(s, "disabled") }

// unlessDefault is a recorded JSON object s as the id reads it, and whether it is there and
// of another type than the API's default one.
func unlessDefault(s, defaultType string) (any, bool) {
	if s == "" {
		return nil, false
	}
	v := jsonValue(s)
	if m, ok := v.(map[string]any); ok && m["type"] == defaultType {
		return nil, false
	}
	return v, true
}

// ID is the call-site ID of r over the optional fields named: "cs_" and the first 16 bytes,
// hex, of SHA-256 of the RFC 8785 canonical JSON of Canonical(fields).
// It is computed by the streaming encoder (AppendCanonical), which writes that canonical JSON
// directly.
func (r Request) ID(fields []string) string { return r.streamID(fields) }

// CanonicalJSON renders a JSON value per RFC 8785 (sorted keys, ES6 number form, minimal
// escaping).
func CanonicalJSON(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return jcs.Transform(b)
}

// canonicalMessages gives every message one shape: {role, name?, content: [{type, text|uri|
// file_id}], tool_calls?: [{id, name, arguments}], tool_call_id?}. System instructions recorded
// separately become a leading system message; a tool message with several results becomes one
// message per result (as the OpenAI API sends them); tool-call arguments are parsed JSON.
// Version 2 writes a result sent as an array of text parts as its text (ToolResultText); with
// errs (FieldIsError) a result marked as a failure has "is_error": true.
func canonicalMessages(system []replaycase.Part, msgs []replaycase.Message, v2, errs bool) []any {
	if len(system) > 0 {
		msgs = append([]replaycase.Message{{Role: "system", Parts: system}}, msgs...)
	}
	out := []any{}
	for _, m := range msgs {
		role := strings.ToLower(m.Role)
		content, calls := []any{}, []any{}
		var results []replaycase.Part
		for _, p := range m.Parts {
			switch p.Type {
			case "tool_call":
				calls = append(calls, map[string]any{"id": p.ID, "name": p.Name, "arguments": jsonValue(p.Arguments)})
			case "tool_call_response":
				results = append(results, p)
			default:
				part := map[string]any{"type": p.Type}
				switch {
				case p.URI != "":
					part["uri"] = p.URI
				case p.FileID != "":
					part["file_id"] = p.FileID
				default:
					if p.Content == "" {
						continue
					}
					part["text"] = p.Content
				}
				content = append(content, part)
			}
		}
		for _, r := range results {
			text := r.Response
			if v2 {
				text = ToolResultText(text)
			}
			tm := map[string]any{"role": "tool", "tool_call_id": r.ID, "content": []any{map[string]any{"type": "text", "text": text}}}
			if errs && r.Error {
				tm["is_error"] = true
			}
			out = append(out, tm)
		}
		if len(results) > 0 && len(content) == 0 && len(calls) == 0 {
			continue
		}
		cm := map[string]any{"role": role, "content": content}
		if m.Name != "" {
			cm["name"] = m.Name
		}
		if len(calls) > 0 {
			cm["tool_calls"] = calls
		}
		out = append(out, cm)
	}
	return out
}

// reading is the request as the version a field set names reads it (v2: it lists FieldV2), and
// that version: version 1 reads Version1 when the request has one.
func (r Request) reading(v2 bool) (Request, int) {
	if v2 {
		return r, Version2
	}
	if r.Version1 != nil {
		return *r.Version1, Version
	}
	return r, Version
}

// ToolResultText is a tool result as version 2 reads it: a result recorded as a JSON array of
// text parts ({"type": "text"|"input_text"|"output_text", "text": …}, other keys ignored) is the
// texts joined by a newline; any other result is itself. The same result is recorded both ways:
// wireapi keeps a Chat tool message's or a Responses function_call_output's part array as its
// compact JSON, the GenAI semconv adapter keeps the text of a single text block, and wireapi
// joins an Anthropic tool_result's text blocks with a newline. Reading the text here makes
// them one id whatever the step stores. (A result whose text is itself such an array reads
// the same: version 1 already gave that text and the array one id.)
func ToolResultText(s string) string {
	t := strings.TrimSpace(s)
	if t == "" || t[0] != '[' {
		return s
	}
	var parts []map[string]any
	if json.Unmarshal([]byte(t), &parts) != nil || len(parts) == 0 {
		return s
	}
	texts := make([]string, len(parts))
	for i, p := range parts {
		text, ok := p["text"].(string)
		switch p["type"] {
		case "text", "input_text", "output_text":
		default:
			ok = false
		}
		if !ok {
			return s
		}
		texts[i] = text
	}
	return strings.Join(texts, "\n")
}

// canonicalNumber is f, or nil for NaN and the infinities: JSON cannot hold them, and a step
// read from a Parquet dataset may (a temperature is a double there). Decoded JSON never yields
// them, so no request that could be written as JSON gets this form.
func canonicalNumber(f float64) any {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	return f
}

// jsonValue parses text that holds JSON (tool arguments, schemas); other text stays a string.
func jsonValue(s string) any {
	t := strings.TrimSpace(s)
	if t == "" {
		return ""
	}
	if t[0] == '{' || t[0] == '[' {
		var v any
		if json.Unmarshal([]byte(t), &v) == nil {
			return v
		}
	}
	return s
}
