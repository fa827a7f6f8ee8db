package normalize

import (
	"encoding/json"

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
	return parseChatRequest(raw)
}

// parseChatRequest is ParseOpenAIRequest on the body's JSON text, for a caller that holds the
// text already and need not encode the decoded body again.
func parseChatRequest(raw []byte) OpenAIRequest {
	r, err := wireapi.ParseChatRequest(raw)
	if err == nil {
		err = r.ReadToolSchemas()
	}
	if err != nil {
		return OpenAIRequest{}
	}
	return OpenAIRequest{Messages: r.Messages, Tools: r.Tools, Model: r.Params}
}

// openAIParams reads the sampling parameters of invocation parameters with the same parser;
// a parameter of the wrong type leaves the others unread, as the API would refuse the call.
func openAIParams(body map[string]any) replaycase.ModelConfig {
	raw, err := json.Marshal(body)
	if err != nil {
		return replaycase.ModelConfig{}
	}
	mc, _ := wireapi.ParseChatParams(raw)
	return mc
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
// ({id, model, choices[{message, finish_reason}], usage}).
func ParseOpenAIResponse(body map[string]any) OpenAIResponse {
	r := OpenAIResponse{ID: mapStr(body, "id"), Model: mapStr(body, "model")}
	if choices, ok := body["choices"].([]any); ok {
		for _, item := range choices {
			c, ok := item.(map[string]any)
			if !ok {
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
	return r
}
