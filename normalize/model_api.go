package normalize

import (
	"encoding/json"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/reprise-dev/reprise/replaycase"
)

// modelAPI says which provider API a model or embedding step called, from what the span itself
// recorded; "" when nothing on the span tells it, never a guess from the provider alone where
// the provider has more than one API. The signals, strongest first:
//   - the provider suffix Vercel's AI SDK writes (ai.model.provider / gen_ai.system
//     "openai.responses", "openai.chat", "openai.embedding", "anthropic.messages");
//   - the response id, whose prefix each API fixes ("resp_" Responses, "chatcmpl-" Chat
//     Completions, "msg_" Anthropic Messages);
//   - the recorded request body (OpenInference input.value): "input" is a Responses request,
//     "messages" a Chat Completions one;
//   - the span name OpenInference's JS instrumentation gives each API ("OpenAI Responses",
//     "OpenAI Chat Completions").
//
// Anthropic's SDK has one model API, so an Anthropic chat step is a Messages call; an OpenAI
// embedding step is an embeddings call.
func modelAPI(spanName string, a pcommon.Map, st *replaycase.Step) string {
	provider := st.ModelConfig.Provider
	if st.Kind == replaycase.StepEmbedding {
		if provider == "openai" || provider == "azure.ai.openai" {
			return replaycase.APIOpenAIEmbeddings
		}
		return ""
	}
	if st.Kind != replaycase.StepLLM {
		return ""
	}
	for _, raw := range []string{getStr(a, "ai.model.provider"), getStr(a, "gen_ai.system")} {
		switch strings.ToLower(raw) {
		case "openai.responses", "azure.responses":
			return replaycase.APIOpenAIResponses
		case "openai.chat", "azure.chat":
			return replaycase.APIOpenAIChatCompletions
		case "anthropic.messages":
			return replaycase.APIAnthropicMessages
		}
	}
	if provider == "anthropic" {
		return replaycase.APIAnthropicMessages
	}
	if provider != "openai" && provider != "azure.ai.openai" {
		return ""
	}
	switch id := st.ResponseID; {
	case strings.HasPrefix(id, "resp_"):
		return replaycase.APIOpenAIResponses
	case strings.HasPrefix(id, "chatcmpl-"):
		return replaycase.APIOpenAIChatCompletions
	}
	if api := requestShapeAPI(getStr(a, "input.value")); api != "" {
		return api
	}
	switch spanName {
	case "OpenAI Responses":
		return replaycase.APIOpenAIResponses
	case "OpenAI Chat Completions":
		return replaycase.APIOpenAIChatCompletions
	}
	return ""
}

// requestShapeAPI tells an OpenAI request body by its top-level fields: Responses takes
// "input", Chat Completions "messages". A body that is not a JSON object tells nothing.
func requestShapeAPI(body string) string {
	var top map[string]json.RawMessage
	if json.Unmarshal([]byte(body), &top) != nil {
		return ""
	}
	_, input := top["input"]
	_, messages := top["messages"]
	switch {
	case input && !messages:
		return replaycase.APIOpenAIResponses
	case messages && !input:
		return replaycase.APIOpenAIChatCompletions
	}
	return ""
}
