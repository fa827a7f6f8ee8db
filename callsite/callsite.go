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

// Version is part of every canonical form; it changes when the algorithm does.
const Version = 1

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
)

// Request is a model request in the case model's terms.
type Request struct {
	Model    string
	System   []replaycase.Part // separately recorded system instructions, if any
	Messages []replaycase.Message
	Tools    []replaycase.ToolDefinition
	Params   replaycase.ModelConfig
}

// FromStep is the request of a recorded LLM step.
func FromStep(st *replaycase.Step) Request {
	return Request{Model: st.ModelConfig.RequestModel, System: st.SystemInstructions, Messages: st.InputMessages, Tools: st.ToolDefinitions, Params: st.ModelConfig}
}

// RecordedFields lists the optional fields a request carries, sorted.
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
	sort.Strings(f)
	return f
}

// Canonical is the canonical form of r restricted to the optional fields named, as a JSON
// value (maps, slices, strings, float64).
func (r Request) Canonical(fields []string) map[string]any {
	use := map[string]bool{}
	for _, f := range fields {
		use[f] = true
	}
	c := map[string]any{"v": float64(Version), "model": r.Model, "messages": canonicalMessages(r.System, r.Messages)}
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
	return c
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
func canonicalMessages(system []replaycase.Part, msgs []replaycase.Message) []any {
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
			out = append(out, map[string]any{"role": "tool", "tool_call_id": r.ID, "content": []any{map[string]any{"type": "text", "text": r.Response}}})
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
