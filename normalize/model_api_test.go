package normalize

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/replaycase"
)

// apis lists the API of every LLM and embedding step, in step order.
func apis(c *replaycase.Case) []string {
	var out []string
	for _, st := range c.Steps {
		if st.Kind == replaycase.StepLLM || st.Kind == replaycase.StepEmbedding {
			out = append(out, string(st.Kind)+" "+st.API)
		}
	}
	return out
}

const (
	chatAPI      = "llm " + replaycase.APIOpenAIChatCompletions
	responsesAPI = "llm " + replaycase.APIOpenAIResponses
)

// Each recorded run's model steps name the API the agent called: the fixtures were recorded from
// Chat Completions calls (otel, OpenLLMetry, OpenInference JS; pydantic-ai), Responses calls
// (Agent Framework, OpenAI Agents SDK, Vercel AI SDK 5 and 6) and one Vercel embed call. A run
// whose telemetry does not tell the API (Koog, ADK's Gemini, pydantic-ai 0.2) leaves it empty.
func TestModelAPIFromRecordedRuns(t *testing.T) {
	for _, run := range []string{testfixtures.OTelEvents, testfixtures.Traceloop, testfixtures.OTelNoContent, testfixtures.OpenInference} {
		c, _, _ := Build(testfixtures.Traces(t, run), testfixtures.Logs(t, run))
		require.Equal(t, []string{chatAPI, chatAPI}, apis(c), run)
	}
	for file, want := range map[string][]string{
		"otel-genai_agent-framework-agent-run-tool-call.langfuse-export.json":                {responsesAPI, responsesAPI},
		"openinference_openai-agents-agent-run-tool-call.langfuse-export.json":               {responsesAPI, responsesAPI},
		"vercel-ai_v5-generateText-tool-call.langfuse-export.json":                           {responsesAPI},
		"otel-genai_pydantic-ai-1.26-multi-agent-parallel-tools.langfuse-export.json":        {chatAPI, chatAPI, chatAPI, chatAPI},
		"indexed-prompt_koog-agent-run-tool-calls.langfuse-export.json":                      {"llm ", "llm "},
		"openinference+gcp-vertex-agent_google-adk-agent-run-tool-call.langfuse-export.json": {"llm ", "llm "},
		"otel-genai-deprecated-events_pydantic-ai-0.2-events-attribute.langfuse-export.json": {"llm "},
	} {
		c, _, _ := Build(langfuseTraces(t, file), plog.NewLogs())
		require.Equal(t, want, apis(c), file)
	}
	byName := map[string][]string{}
	for _, td := range jsSpanTraces(t, "vercel-ai_v6-raw-spans-generate-stream-object-embed.json") {
		c, _, _ := Build(td, plog.NewLogs())
		name := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Name()
		byName[name] = append(byName[name], apis(c)...)
	}
	require.Equal(t, []string{responsesAPI, responsesAPI}, byName["ai.generateText.doGenerate"])
	require.Equal(t, []string{responsesAPI}, byName["ai.streamText.doStream"])
	require.Equal(t, []string{"embedding " + replaycase.APIOpenAIEmbeddings}, byName["ai.embed.doEmbed"])
}

// The signals that the recorded runs above do not exercise, one span each.
func TestModelAPISignals(t *testing.T) {
	for _, tc := range []struct {
		name  string
		span  string
		attrs map[string]any
		want  string
	}{
		{"anthropic provider", "chat claude-sonnet-4-5", map[string]any{"gen_ai.operation.name": "chat", "gen_ai.provider.name": "anthropic", "gen_ai.response.id": "msg_01"}, replaycase.APIAnthropicMessages},
		{"responses request body", "LLM", map[string]any{"openinference.span.kind": "LLM", "llm.system": "openai", "input.mime_type": "application/json", "input.value": `{"model":"gpt-4o","input":"hi"}`}, replaycase.APIOpenAIResponses},
		{"chat request body", "LLM", map[string]any{"openinference.span.kind": "LLM", "llm.system": "openai", "input.mime_type": "application/json", "input.value": `{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]}`}, replaycase.APIOpenAIChatCompletions},
		{"openinference responses span name", "OpenAI Responses", map[string]any{"openinference.span.kind": "LLM", "llm.system": "openai"}, replaycase.APIOpenAIResponses},
		{"openai chat with no API evidence", "chat gpt-4o", map[string]any{"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai"}, ""},
		{"embeddings of another provider", "embeddings", map[string]any{"gen_ai.operation.name": "embeddings", "gen_ai.provider.name": "cohere"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _, genAI := Build(attributeSpan(t, tc.span, tc.attrs, 1), plog.NewLogs())
			require.True(t, genAI)
			require.Len(t, c.Steps, 1)
			require.Equal(t, tc.want, c.Steps[0].API)
		})
	}
}
