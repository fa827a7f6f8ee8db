package normalize

import "strings"

// The one normalization table for values that drift between emitters. Each function returns
// the OTel GenAI semconv value; anything it does not know is kept, lower-cased.

var roles = map[string]string{
	"model":     "assistant", // Gemini
	"ai":        "assistant", // LangChain
	"human":     "user",      // LangChain
	"developer": "system",    // OpenAI o-series
	"function":  "tool",      // OpenAI legacy function results
}

// Role normalizes a message role.
func canonicalRole(r string) string {
	r = strings.ToLower(strings.TrimSpace(r))
	if n, ok := roles[r]; ok {
		return n
	}
	return r
}

var finishReasons = map[string]string{
	"tool_call":         "tool_call",
	"tool_calls":        "tool_call",
	"tool-calls":        "tool_call",
	"tool_use":          "tool_call",
	"function_call":     "tool_call",
	"stop":              "stop",
	"end_turn":          "stop",
	"complete":          "stop",
	"length":            "length",
	"max_tokens":        "length",
	"max_output_tokens": "length", // OpenAI Responses' incomplete_details.reason
	"content_filter":    "content_filter",
	"content-filter":    "content_filter",
	"safety":            "content_filter",
	"error":             "error",
}

// FinishReason normalizes a finish reason to the semconv output-message enum
// (stop, length, content_filter, tool_call, error), keeping unknown values lower-cased.
// Anthropic's stop_sequence is kept as recorded, not made stop: the Messages API tells an agent
// that a stop sequence ended the answer, and a replay must tell it the same (replayext renders
// it as stop for the OpenAI APIs). It is
// exported for the Chat Completions body parser (openai.go), which may live in its own package.
func FinishReason(f string) string {
	f = strings.ToLower(strings.TrimSpace(f))
	if n, ok := finishReasons[f]; ok {
		return n
	}
	return f
}

var providers = map[string]string{
	"az.ai.openai":    "azure.ai.openai",
	"az.ai.inference": "azure.ai.inference",
	"azure":           "azure.ai.openai",
	"vertex_ai":       "gcp.vertex_ai",
	"vertexai":        "gcp.vertex_ai",
	"gemini":          "gcp.gemini",
	"google":          "gcp.gen_ai",
	"xai":             "x_ai",
	"mistralai":       "mistral_ai",
	"bedrock":         "aws.bedrock",
	"aws":             "aws.bedrock",
	"amazon":          "aws.bedrock",
}

// Provider normalizes a provider or system name: lower-cased, Vercel's ".chat"/".responses"
// style suffixes removed, deprecated semconv values renamed.
func canonicalProvider(p string) string {
	p = strings.ToLower(strings.TrimSpace(p))
	if i := strings.IndexByte(p, '.'); i > 0 {
		if _, known := providers[p]; !known && !strings.HasPrefix(p, "gcp.") && !strings.HasPrefix(p, "azure.") && !strings.HasPrefix(p, "aws.") && !strings.HasPrefix(p, "ibm.") {
			p = p[:i]
		}
	}
	if n, ok := providers[p]; ok {
		return n
	}
	return p
}
