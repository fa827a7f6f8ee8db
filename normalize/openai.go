package normalize

import (
	"github.com/reprise-dev/reprise/replaycase"
)

// OpenAIRequest is what a Chat Completions request body says about a model call.
type OpenAIRequest struct {
	Messages []replaycase.Message
	Tools    []replaycase.ToolDefinition
	Model    replaycase.ModelConfig
}

// ParseOpenAIRequest reads a Chat Completions request body ({model, messages, tools,
// temperature, top_p, max_tokens | max_completion_tokens, seed, stop, tool_choice}), as
// OpenInference records it in input.value and llm.invocation_parameters, and as an OpenAI SDK
// sends it.
func ParseOpenAIRequest(body map[string]any) OpenAIRequest {
	var r OpenAIRequest
	if list, ok := body["messages"].([]any); ok {
		for _, item := range list {
			if m, ok := item.(map[string]any); ok {
				r.Messages = append(r.Messages, openAIMessage(m, "user"))
			}
		}
	}
	if tools, ok := body["tools"].([]any); ok {
		r.Tools, _ = toolDefinitions(tools)
	}
	r.Model = openAIParams(body)
	return r
}

// openAIParams reads the sampling parameters of a request body or of invocation parameters.
func openAIParams(body map[string]any) replaycase.ModelConfig {
	mc := replaycase.ModelConfig{RequestModel: mapStr(body, "model")}
	if f, ok := toFloat(body["temperature"]); ok {
		mc.Temperature = &f
	}
	if f, ok := toFloat(body["top_p"]); ok {
		mc.TopP = &f
	}
	for _, k := range []string{"max_tokens", "max_completion_tokens", "max_output_tokens"} {
		if n, ok := toInt(body[k]); ok {
			mc.MaxTokens = &n
			break
		}
	}
	if n, ok := toInt(body["seed"]); ok {
		mc.Seed = &n
	}
	switch stop := body["stop"].(type) {
	case string:
		mc.Stop = []string{stop}
	case []any:
		for _, s := range stop {
			mc.Stop = append(mc.Stop, text(s))
		}
	}
	mc.ToolChoice = text(body["tool_choice"])
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
