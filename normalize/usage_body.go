package normalize

import (
	"fmt"

	"github.com/reprise-dev/reprise/replaycase"
)

// responseUsage reads the usage object of a recorded response body in the shapes other than
// Chat Completions (whose prompt_tokens / completion_tokens openai.go reads; here they are only
// checked to be numbers):
//
//   - Anthropic Messages ({"type": "message", "usage": {input_tokens, output_tokens,
//     cache_read_input_tokens, cache_creation_input_tokens}}): input_tokens leaves the cached
//     tokens out, so input = input_tokens + cache_read_input_tokens + cache_creation_input_tokens,
//     the rule the semantic conventions give for Anthropic;
//   - OpenAI Responses ({"object": "response", "usage": {input_tokens, output_tokens,
//     total_tokens, input_tokens_details.cached_tokens, output_tokens_details.reasoning_tokens}}):
//     input_tokens already includes the cached tokens.
//
// A count that is there but is not an integer is a finding; the usage comes back empty for any
// other shape.
func (b *stepBuilder) responseUsage(body map[string]any, where string) replaycase.Usage {
	usage, _ := body["usage"].(map[string]any)
	if usage == nil {
		return replaycase.Usage{}
	}
	if usage["prompt_tokens"] != nil { // Chat Completions: read by ParseOpenAIResponse, checked here
		checkNumbers(b, usage, where, replaycase.ReasonInvalidUsage, toInt, "prompt_tokens", "completion_tokens", "total_tokens")
		return replaycase.Usage{}
	}
	count := func(m map[string]any, key string) int64 {
		raw, ok := m[key]
		if !ok || raw == nil {
			return 0
		}
		n, ok := toInt(raw)
		if !ok {
			b.invalid(replaycase.ReasonInvalidUsage, fmt.Sprintf("%s %s is %s, not a number", where, key, text(raw)))
		}
		return n
	}
	details := func(key string) map[string]any {
		d, _ := usage[key].(map[string]any)
		return d
	}
	var u replaycase.Usage
	switch {
	case mapStr(body, "type") == "message" || usage["cache_creation_input_tokens"] != nil || usage["cache_read_input_tokens"] != nil:
		u.CacheReadInputTokens = count(usage, "cache_read_input_tokens")
		u.CacheWriteInputTokens = count(usage, "cache_creation_input_tokens")
		u.InputTokens = count(usage, "input_tokens") + u.CacheReadInputTokens + u.CacheWriteInputTokens
		u.OutputTokens = count(usage, "output_tokens")
	case mapStr(body, "object") == "response" || usage["input_tokens_details"] != nil || usage["output_tokens_details"] != nil:
		u.InputTokens = count(usage, "input_tokens")
		u.OutputTokens = count(usage, "output_tokens")
		u.TotalTokens = count(usage, "total_tokens")
		if d := details("input_tokens_details"); d != nil {
			u.CacheReadInputTokens = count(d, "cached_tokens")
		}
		if d := details("output_tokens_details"); d != nil {
			u.ReasoningOutputTokens = count(d, "reasoning_tokens")
		}
	}
	return u
}
