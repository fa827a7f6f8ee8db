package normalize

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/reprise-dev/reprise/replaycase"
	"github.com/reprise-dev/reprise/wireapi"
)

// OpenAIRequest is what a Chat Completions request body says about a model call.
type OpenAIRequest struct {
	Messages []replaycase.Message
	Tools    []replaycase.ToolDefinition
	Model    replaycase.ModelConfig
}

// ParseOpenAIRequest reads a Chat Completions request body, as OpenInference records it in
// input.value, with the replay endpoint's own parser (wireapi), so that a recorded request and
// the live request an SDK sends canonicalize identically. A body the API would refuse yields
// nothing: no live request could ever match it.
func ParseOpenAIRequest(body map[string]any) OpenAIRequest {
	raw, err := json.Marshal(body)
	if err != nil {
		return OpenAIRequest{}
	}
	r, _ := parseChatRequest(raw, true)
	return r
}

// parseChatRequest is ParseOpenAIRequest on the body's JSON text, for a caller that holds the
// text already and need not encode the decoded body again. decoded reports whether the replay
// endpoint's parser took the body (its tool schemas aside): a JSON object whose sampling
// parameters are numbers, so a generic parse of the same text and checkRequestNumbers would find
// nothing wrong (FuzzOpenInferenceRequestParsedOnce).
//
// withTools says whether the caller needs the offered tools; without them Tools is nil and
// their schemas are not read, which is most of the work for an agent with many tools. Reading
// them cannot fail once the body parsed (a schema sits four levels into the body, so it is
// within encoding/json's nesting limit whenever the body is), so leaving them unread changes
// nothing else.
func parseChatRequest(raw []byte, withTools bool) (r OpenAIRequest, decoded bool) {
	req, err := wireapi.ParseChatRequest(raw)
	if err != nil {
		return OpenAIRequest{}, false
	}
	r = OpenAIRequest{Messages: req.Messages, Model: req.Params}
	if !withTools {
		return r, true
	}
	if req.ReadToolSchemas() != nil {
		return OpenAIRequest{}, true
	}
	r.Tools = req.Tools
	return r, true
}

// recordedText is the text invocation parameters were decoded from, for the API's own parsers
// (wireapi): when the attribute recorded holds JSON text, that text, as the API would parse it,
// instead of an encoding of the decoded body (which can be large: OpenInference's Python
// instrumentations record the offered tools' schemas there too); nil when body cannot be encoded.
func recordedText(recorded pcommon.Value, body map[string]any) []byte {
	if recorded.Type() == pcommon.ValueTypeStr {
		// jsonAttr's parse allows any Unicode whitespace after the value; the API's parser
		// takes JSON whitespace only.
		return []byte(strings.TrimRightFunc(recorded.Str(), unicode.IsSpace))
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return nil
	}
	return raw
}

// OpenAIResponse is what a Chat Completions response body says about a model call.
type OpenAIResponse struct {
	ID            string
	Model         string
	Choices       []replaycase.Message
	FinishReasons []string
	Usage         replaycase.Usage
}

// ParseOpenAIResponse reads a Chat Completions response body
// ({id, model, choices[{message, finish_reason}], usage}). A choice that is not a JSON object
// says nothing that can be read: it is left out, the rest is read, and the error says how many
// were, so that the caller reports an answer short of them.
func ParseOpenAIResponse(body map[string]any) (OpenAIResponse, error) {
	r := OpenAIResponse{ID: mapStr(body, "id"), Model: mapStr(body, "model")}
	skipped := 0
	if choices, ok := body["choices"].([]any); ok {
		for _, item := range choices {
			c, ok := item.(map[string]any)
			if !ok {
				skipped++
				continue
			}
			msg, _ := c["message"].(map[string]any)
			if msg == nil {
				msg = map[string]any{}
			}
			m := openAIMessage(msg, "assistant")
			m.FinishReason = FinishReason(mapStr(c, "finish_reason"))
			r.Choices = append(r.Choices, m)
			r.FinishReasons = append(r.FinishReasons, m.FinishReason)
		}
	}
	if u, ok := body["usage"].(map[string]any); ok {
		r.Usage.InputTokens, _ = toInt(u["prompt_tokens"])
		r.Usage.OutputTokens, _ = toInt(u["completion_tokens"])
		r.Usage.TotalTokens, _ = toInt(u["total_tokens"])
		if d, ok := u["prompt_tokens_details"].(map[string]any); ok {
			r.Usage.CacheReadInputTokens, _ = toInt(d["cached_tokens"])
		}
		if d, ok := u["completion_tokens_details"].(map[string]any); ok {
			r.Usage.ReasoningOutputTokens, _ = toInt(d["reasoning_tokens"])
		}
	}
	if skipped > 0 {
		return r, fmt.Errorf("%d choice(s) are not a JSON object and are left out", skipped)
	}
	return r, nil
}
