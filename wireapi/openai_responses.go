package wireapi

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/reprise-dev/reprise/replaycase"
)

// OpenAI Responses (POST /v1/responses).

// ResponsesRequest is what a Responses request says about a model call, in the case model's
// terms. Items that refer to earlier responses (previous_response_id, item_reference) are
// kept apart: only the case the request replays can resolve them (Resolve).
type ResponsesRequest struct {
	// Input is the request's own conversation: instructions as a leading system message, then
	// its input items, with references still unresolved (a Part of type "item_reference"
	// whose ID is the referenced item's id).
	Input  []replaycase.Message
	Tools  []replaycase.ToolDefinition
	Params replaycase.ModelConfig
	Stream bool
	// PreviousResponseID continues the conversation of a stored response.
	PreviousResponseID string
}

type responsesBody struct {
	Model              *string          `json:"model"`
	Input              json.RawMessage  `json:"input"`
	Instructions       *string          `json:"instructions"`
	Tools              []*responsesTool `json:"tools"`
	Temperature        *float64         `json:"temperature"`
	TopP               *float64         `json:"top_p"`
	MaxOutputTokens    *int64           `json:"max_output_tokens"`
	ToolChoice         json.RawMessage  `json:"tool_choice"`
	Text               *responsesText   `json:"text"`
	Reasoning          *reasoningObject `json:"reasoning"`
	ParallelToolCalls  *bool            `json:"parallel_tool_calls"`
	Stream             *bool            `json:"stream"`
	PreviousResponseID *string          `json:"previous_response_id"`
}

// responsesText is the text output configuration: its format is Chat's response_format.
type responsesText struct {
	Format    json.RawMessage `json:"format"`
	Verbosity *string         `json:"verbosity"`
}

type responsesTool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// responsesItem is one input item: a message (type "message" or absent), a function call, a
// function call's output, or a reference to an item of a stored response.
type responsesItem struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	Role      *string         `json:"role"`
	Content   json.RawMessage `json:"content"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Output    json.RawMessage `json:"output"`
}

// PartItemReference marks an unresolved item_reference in ResponsesRequest.Input.
const PartItemReference = "item_reference"

// ParseResponsesRequest reads a Responses request body strictly: a JSON object with a model
// and an input (a string or an array of items). Errors are *RequestError.
func ParseResponsesRequest(body []byte) (*ResponsesRequest, error) {
	var b responsesBody
	if err := decodeObject(body, &b); err != nil {
		return nil, err
	}
	if b.Model == nil || *b.Model == "" {
		return nil, missing("model")
	}
	cb := chatBody{Model: b.Model, Temperature: b.Temperature, TopP: b.TopP, MaxOutputTokens: b.MaxOutputTokens, ToolChoice: b.ToolChoice,
		Reasoning: b.Reasoning, ParallelToolCalls: b.ParallelToolCalls, Text: b.Text}
	r := &ResponsesRequest{Stream: b.Stream != nil && *b.Stream}
	var err error
	if r.Params, err = cb.params(); err != nil {
		return nil, err
	}
	if b.Text != nil {
		if r.Params.ResponseFormat, r.Params.OutputType, err = outputFormat(b.Text.Format, "text.format"); err != nil {
			return nil, err
		}
	}
	if b.PreviousResponseID != nil {
		r.PreviousResponseID = *b.PreviousResponseID
	}
	if b.Instructions != nil && *b.Instructions != "" {
		r.Input = append(r.Input, replaycase.Message{Role: "system", Parts: []replaycase.Part{{Type: "text", Content: *b.Instructions}}})
	}
	switch kind(b.Input) {
	case 0, 'n':
		return nil, missing("input")
	case '"':
		var s string
		_ = json.Unmarshal(b.Input, &s)
		r.Input = append(r.Input, replaycase.Message{Role: "user", Parts: []replaycase.Part{{Type: "text", Content: s}}})
	case '[':
		var items []json.RawMessage
		_ = json.Unmarshal(b.Input, &items)
		for i, raw := range items {
			if err := r.addItem(raw, fmt.Sprintf("input[%d]", i)); err != nil {
				return nil, err
			}
		}
	default:
		return nil, invalidType("input", "a string or an array of input items")
	}
	for i, t := range b.Tools {
		param := fmt.Sprintf("tools[%d]", i)
		if t == nil {
			return nil, invalidType(param, "an object")
		}
		if t.Type != "function" { // built-in tools (web_search, file_search…) run at OpenAI: nothing to replay them from
			return nil, invalidValue(param+".type", "function (built-in tools cannot be replayed)")
		}
		if t.Name == "" {
			return nil, missing(param + ".name")
		}
		r.Tools = append(r.Tools, replaycase.ToolDefinition{Type: "function", Name: t.Name, Description: t.Description})
	}
	return r, nil
}

// addItem appends one input item as one case-model message: a function call is an assistant
// message with that one call, a function call output a tool message (one message per item,
// as the API sends them and as instrumentations record them).
func (r *ResponsesRequest) addItem(raw json.RawMessage, param string) error {
	var it responsesItem
	if kind(raw) != '{' || decodeObject(raw, &it) != nil {
		return invalidType(param, "an input item object")
	}
	switch it.Type {
	case "", "message":
		if it.Role == nil {
			return missing(param + ".role")
		}
		role, ok := chatRoles[*it.Role]
		if !ok || role == "tool" {
			return invalidValue(param+".role", "one of system, developer, user, assistant")
		}
		parts, err := contentParts(it.Content, param+".content")
		if err != nil {
			return err
		}
		r.Input = append(r.Input, replaycase.Message{Role: role, Parts: parts})
	case "function_call":
		if it.CallID == "" {
			return missing(param + ".call_id")
		}
		args, err := rawText(it.Arguments, param+".arguments")
		if err != nil {
			return err
		}
		r.Input = append(r.Input, replaycase.Message{Role: "assistant", Parts: []replaycase.Part{{Type: "tool_call", ID: it.CallID, Name: it.Name, Arguments: args}}})
	case "function_call_output":
		if it.CallID == "" {
			return missing(param + ".call_id")
		}
		out, err := rawText(it.Output, param+".output")
		if err != nil {
			return err
		}
		r.Input = append(r.Input, replaycase.Message{Role: "tool", Parts: []replaycase.Part{{Type: "tool_call_response", ID: it.CallID, Response: out}}})
	case PartItemReference:
		if it.ID == "" {
			return missing(param + ".id")
		}
		r.Input = append(r.Input, replaycase.Message{Parts: []replaycase.Part{{Type: PartItemReference, ID: it.ID}}})
	case "reasoning": // the model's own reasoning, echoed back: not part of what the call asked
	default:
		return invalidValue(param+".type", "message, function_call, function_call_output, item_reference or reasoning")
	}
	return nil
}

// Recorded looks up a recorded step: the one that answered as response id id, or, with
// byCall, the one whose output has the function call with call id (or recorded item id) id.
// Nil when there is none. Two kinds of key, not one string with a prefix: a client's
// previous_response_id can then never be taken for a call lookup.
type Recorded func(id string, byCall bool) *replaycase.Step

// Resolve gives the whole conversation a request continues: the input and output of the
// response previous_response_id names (recursively, as the API stores them), then the
// request's own input with each item_reference replaced by the recorded output item it names
// (item ids as responseItems renders them). An id the case did not record is a RequestError
// on the field that names it.
func (r *ResponsesRequest) Resolve(recorded Recorded) ([]replaycase.Message, error) {
	// The request's instructions come first, also when the rest continues a stored response.
	lead := 0
	for lead < len(r.Input) && r.Input[lead].Role == "system" {
		lead++
	}
	out := append([]replaycase.Message{}, r.Input[:lead]...)
	if r.PreviousResponseID != "" {
		st := recorded(r.PreviousResponseID, false)
		if st == nil {
			return nil, &RequestError{Param: "previous_response_id", Code: "invalid_value", Message: "Previous response not found in the replayed case."}
		}
		out = append(out, withoutSystem(st.InputMessages)...)
		out = append(out, asItems(st.OutputMessages)...)
	}
	for i := lead; i < len(r.Input); i++ {
		m := r.Input[i]
		if len(m.Parts) != 1 || m.Parts[0].Type != PartItemReference {
			out = append(out, m)
			continue
		}
		part, ok := findItem(recorded, m.Parts[0].ID)
		if !ok {
			return nil, &RequestError{Param: fmt.Sprintf("input[%d].id", i), Code: "invalid_value", Message: "Referenced item not found in the replayed case."}
		}
		out = append(out, replaycase.Message{Role: "assistant", Parts: []replaycase.Part{part}})
	}
	return out, nil
}

// withoutSystem drops system messages: a continued response does not inherit instructions.
func withoutSystem(msgs []replaycase.Message) []replaycase.Message {
	out := make([]replaycase.Message, 0, len(msgs))
	for _, m := range msgs {
		if m.Role != "system" {
			out = append(out, m)
		}
	}
	return out
}

// asItems splits recorded output messages the way the API lists output items: the text of a
// message as one message, each tool call as its own.
func asItems(msgs []replaycase.Message) []replaycase.Message {
	var out []replaycase.Message
	for _, m := range msgs {
		text := replaycase.Message{Role: m.Role}
		var calls []replaycase.Message
		for _, p := range m.Parts {
			if p.Type == "tool_call" {
				calls = append(calls, replaycase.Message{Role: m.Role, Parts: []replaycase.Part{p}})
			} else {
				text.Parts = append(text.Parts, p)
			}
		}
		if len(text.Parts) > 0 {
			out = append(out, text)
		}
		out = append(out, calls...)
	}
	return out
}

// findItem resolves a function call's item id as responseItems renders it: the recorded item
// id, or fc_<call_id> when none was recorded (the lookup is by item id or call id, so any
// step that recorded the call answers).
func findItem(recorded Recorded, id string) (replaycase.Part, bool) {
	keys := []string{id}
	if callID, ok := strings.CutPrefix(id, "fc_"); ok {
		keys = append(keys, callID)
	}
	for _, key := range keys {
		if st := recorded(key, true); st != nil {
			for _, m := range st.OutputMessages {
				for _, p := range m.Parts {
					if p.Type == "tool_call" && (p.ItemID == id || p.ID == key) {
						return p, true
					}
				}
			}
		}
	}
	return replaycase.Part{}, false
}

// Rendering a recorded step as a Responses response.

type responseObject struct {
	ID                 string         `json:"id"`
	Object             string         `json:"object"`
	CreatedAt          int64          `json:"created_at"`
	Status             string         `json:"status"`
	Model              string         `json:"model"`
	Output             []responseItem `json:"output"`
	ParallelToolCalls  bool           `json:"parallel_tool_calls"`
	PreviousResponseID *string        `json:"previous_response_id"`
	Error              any            `json:"error"`
	IncompleteDetails  any            `json:"incomplete_details"`
	Usage              *responseUsage `json:"usage"`
}

type responseItem struct {
	Type      string  `json:"type"`
	ID        string  `json:"id"`
	Status    string  `json:"status"`
	Role      string  `json:"role,omitempty"`
	Content   []any   `json:"content,omitempty"` // responseTextPart, responseRefusalPart
	CallID    string  `json:"call_id,omitempty"`
	Name      string  `json:"name,omitempty"`
	Arguments *string `json:"arguments,omitempty"`
}

// addedMessage is a message item as response.output_item.added lists it: its content an empty
// list (this Content, shallower than responseItem's omitempty one, is the one encoded).
type addedMessage struct {
	responseItem
	Content []any `json:"content"`
}

type responseTextPart struct {
	Type        string `json:"type"`
	Text        string `json:"text"`
	Annotations []any  `json:"annotations"`
}

// responseRefusalPart is a message's refusal (type "refusal"), as the API sends it.
type responseRefusalPart struct {
	Type    string `json:"type"`
	Refusal string `json:"refusal"`
}

type responseUsage struct {
	InputTokens         int64 `json:"input_tokens"`
	InputTokensDetails  any   `json:"input_tokens_details"`
	OutputTokens        int64 `json:"output_tokens"`
	OutputTokensDetails any   `json:"output_tokens_details"`
	TotalTokens         int64 `json:"total_tokens"`
}

// responseItems renders a recorded step's output as Responses output items: per output
// message, its text (and refusal) as one message item, then each tool call as a function_call
// item whose call_id is the recorded call id. Item ids are the recorded ones (Part.ItemID) when
// the telemetry had them, else derived: msg_<response id>_<n> and fc_<call id>. Both are
// stable, so item_reference requests that quote them resolve (see Resolve).
func responseItems(st *replaycase.Step) []responseItem {
	items := []responseItem{}
	id := strings.TrimPrefix(ResponsesID(st), "resp_")
	for _, m := range st.OutputMessages {
		content, calls := outputMessage(m)
		messageID, callItems := recordedItemIDs(m)
		var parts []any
		if content != nil {
			parts = append(parts, responseTextPart{Type: "output_text", Text: *content, Annotations: []any{}})
		}
		if r := refusal(m); r != nil { // the agent must see the model refuse, not an empty answer
			parts = append(parts, responseRefusalPart{Type: "refusal", Refusal: *r})
		}
		if len(parts) > 0 {
			items = append(items, responseItem{Type: "message", ID: cmp.Or(messageID, fmt.Sprintf("msg_%s_%d", id, len(items))), Status: "completed", Role: "assistant", Content: parts})
		}
		for _, c := range calls {
			args := c.Function.Arguments
			items = append(items, responseItem{Type: "function_call", ID: cmp.Or(callItems[c.ID], "fc_"+c.ID), Status: "completed", CallID: c.ID, Name: c.Function.Name, Arguments: &args})
		}
	}
	return items
}

// recordedItemIDs gives the item ids an output message recorded: its message item's (on any
// non-tool-call part) and each tool call's, by call id.
func recordedItemIDs(m replaycase.Message) (messageID string, byCall map[string]string) {
	byCall = map[string]string{}
	for _, p := range m.Parts {
		switch {
		case p.ItemID == "":
		case p.Type == "tool_call":
			byCall[p.ID] = p.ItemID
		default:
			messageID = cmp.Or(messageID, p.ItemID)
		}
	}
	return messageID, byCall
}

// ResponsesID is the id a recorded step answers with as a Responses response: the recorded
// response id, else one derived from its call-site id.
func ResponsesID(st *replaycase.Step) string {
	if st.ResponseID != "" {
		return st.ResponseID
	}
	return "resp_" + strings.TrimPrefix(st.CallSiteID, "cs_")
}

// finalStatus is how the recorded response ended: "incomplete", with the reason, when the model
// stopped at the token limit or a content filter (the API's status, which agents check: the
// OpenAI Agents SDK raises on it), else "completed". A reason is read as Chat Completions reads
// it (finishReason): Anthropic's own, kept as recorded, end the answer the same way through
// both OpenAI APIs (model_context_window_exceeded is the token limit).
func finalStatus(st *replaycase.Step) (status string, details any) {
	for _, m := range st.OutputMessages {
		switch finishReason(m.FinishReason) {
		case "length", "max_output_tokens":
			return "incomplete", map[string]string{"reason": "max_output_tokens"}
		case "content_filter":
			return "incomplete", map[string]string{"reason": "content_filter"}
		}
	}
	return "completed", nil
}

// response is the response object in progress (status "in_progress") or as it ended
// (status "" : finalStatus).
func (r *ResponsesRequest) response(st *replaycase.Step, status string, output []responseItem) responseObject {
	var prev *string
	if r.PreviousResponseID != "" {
		prev = &r.PreviousResponseID
	}
	var details any
	if status == "" {
		status, details = finalStatus(st)
	}
	o := responseObject{ID: ResponsesID(st), Object: "response", CreatedAt: st.StartTime.Unix(), Status: status, Model: responseModel(st),
		Output: output, ParallelToolCalls: true, PreviousResponseID: prev, IncompleteDetails: details}
	if status != "in_progress" {
		o.Usage = &responseUsage{InputTokens: st.Usage.InputTokens, InputTokensDetails: map[string]int64{"cached_tokens": st.Usage.CacheReadInputTokens},
			OutputTokens: st.Usage.OutputTokens, OutputTokensDetails: map[string]int64{"reasoning_tokens": st.Usage.ReasoningOutputTokens}, TotalTokens: st.Usage.TotalTokens}
	}
	return o
}

// WriteResponsesResponse answers req with the recorded step: a response object, or, when req
// asked to stream, the API's Server-Sent Events.
func WriteResponsesResponse(w http.ResponseWriter, req *ResponsesRequest, st *replaycase.Step) {
	if req.Stream {
		writeResponsesStream(w, req, st, -1)
		return
	}
	writeJSON(w, ResponsesResponseJSON(req, st))
}

// ResponsesResponseJSON is the non-streaming answer of a recorded step, as the body
// WriteResponsesResponse sends. It depends on the step and req.PreviousResponseID alone, so a
// caller may keep it.
func ResponsesResponseJSON(req *ResponsesRequest, st *replaycase.Step) []byte {
	return encodeJSON(req.response(st, "", responseItems(st)))
}

// writeResponsesStream sends the events OpenAI streams, each with its sequence_number and no
// [DONE]: response.created, response.in_progress, then per output item output_item.added,
// for a message content_part.added, output_text.delta, output_text.done, content_part.done,
// for a function call function_call_arguments.delta and .done, then output_item.done; last
// response.completed with the usage (response.incomplete when the recorded response was cut
// short: finalStatus).
// Events numbered startingAfter or lower are left out (-1: none is).
func writeResponsesStream(w http.ResponseWriter, req *ResponsesRequest, st *replaycase.Step, startingAfter int) {
	es := newEventStream(w)
	seq := 0
	send := func(typ string, fields map[string]any) {
		fields["type"], fields["sequence_number"] = typ, seq
		if seq > startingAfter {
			es.send(typ, fields)
		}
		seq++
	}
	items := responseItems(st)
	send("response.created", map[string]any{"response": req.response(st, "in_progress", []responseItem{})})
	send("response.in_progress", map[string]any{"response": req.response(st, "in_progress", []responseItem{})})
	for i, it := range items {
		added := it
		added.Status = "in_progress"
		switch it.Type {
		case "message":
			// The API adds a message item with its content empty, not absent: the SDKs' stream
			// helpers (openai-python's responses.stream()) append each content part to it.
			send("response.output_item.added", map[string]any{"output_index": i, "item": addedMessage{added, []any{}}})
			for j, part := range it.Content {
				at := map[string]any{"item_id": it.ID, "output_index": i, "content_index": j}
				switch p := part.(type) {
				case responseTextPart:
					send("response.content_part.added", with(at, "part", responseTextPart{Type: "output_text", Text: "", Annotations: []any{}}))
					send("response.output_text.delta", with(with(at, "delta", p.Text), "logprobs", []any{}))
					send("response.output_text.done", with(with(at, "text", p.Text), "logprobs", []any{}))
				case responseRefusalPart:
					send("response.content_part.added", with(at, "part", responseRefusalPart{Type: "refusal"}))
					send("response.refusal.delta", with(at, "delta", p.Refusal))
					send("response.refusal.done", with(at, "refusal", p.Refusal))
				}
				send("response.content_part.done", with(at, "part", part))
			}
		case "function_call":
			empty := ""
			added.Arguments = &empty
			send("response.output_item.added", map[string]any{"output_index": i, "item": added})
			at := map[string]any{"item_id": it.ID, "output_index": i}
			send("response.function_call_arguments.delta", with(at, "delta", *it.Arguments))
			send("response.function_call_arguments.done", with(at, "arguments", *it.Arguments))
		}
		send("response.output_item.done", map[string]any{"output_index": i, "item": it})
	}
	final := req.response(st, "", items)
	send("response."+final.Status, map[string]any{"response": final}) // response.completed or response.incomplete
}

// with is fields plus one more, in a new map.
func with(fields map[string]any, k string, v any) map[string]any {
	out := make(map[string]any, len(fields)+1)
	for key, val := range fields {
		out[key] = val
	}
	out[k] = v
	return out
}
