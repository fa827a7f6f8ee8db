package normalize

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/callsite"
	"github.com/reprise-dev/reprise/replaycase"
)

// vercelObjectCall is the AI SDK 6 generateObject call of the v6 reference capture, its outer
// ai.generateObject span and its ai.generateObject.doGenerate span in one trace, the model call
// a child of the SDK call as the SDK links them (the capture keeps no parent ids). edit, if
// set, changes the outer span's attributes first.
func vercelObjectCall(t *testing.T, edit func(outer ptrace.Span)) ptrace.Traces {
	t.Helper()
	byName := map[string]ptrace.Span{}
	for _, td := range jsSpanTraces(t, "vercel-ai_v6-raw-spans-generate-stream-object-embed.json") {
		sp := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
		byName[sp.Name()] = sp
	}
	out := ptrace.NewTraces()
	spans := out.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	outer, inner := spans.AppendEmpty(), spans.AppendEmpty()
	byName["ai.generateObject"].CopyTo(outer)
	byName["ai.generateObject.doGenerate"].CopyTo(inner)
	inner.SetTraceID(outer.TraceID())
	inner.SetParentSpanID(outer.SpanID())
	if edit != nil {
		edit(outer)
	}
	return out
}

// The capture's generateObject records ai.schema and ai.settings.output "object" on the outer
// span only: its model call asked for JSON, so the model step's output type is json (and its
// call-site id covers output_type, which the id of the same call recorded before this did not:
// the id changes, as it must for a recording made for JSON). No response_format is made up from
// the bare schema.
func TestVercelGenerateObjectSchemaAsksForJSON(t *testing.T) {
	c, findings, _ := Build(vercelObjectCall(t, nil), plog.NewLogs())
	require.Empty(t, findings)
	require.Len(t, c.Steps, 1)
	st := c.Steps[0]
	require.Equal(t, replaycase.StepLLM, st.Kind)
	assert.Equal(t, "json", st.ModelConfig.OutputType)
	assert.Empty(t, st.ModelConfig.ResponseFormat, "the schema alone is not the format object sent")
	assert.Contains(t, st.CallSiteFields, callsite.FieldOutputType)
	assert.NotContains(t, st.CallSiteFields, callsite.FieldResponseFormat)

	text := st
	text.ModelConfig.OutputType = ""
	assert.NotEqual(t, st.CallSiteID, callsite.FromStep(&text).ID(st.CallSiteFields), "a request for text is another request")
}

// The model call alone (the capture as it is, no parent) has no schema: nothing is assumed.
func TestVercelModelCallWithoutItsObjectSpanHasNoOutputType(t *testing.T) {
	for _, td := range jsSpanTraces(t, "vercel-ai_v6-raw-spans-generate-stream-object-embed.json") {
		c, _, _ := Build(td, plog.NewLogs())
		for _, st := range c.Steps {
			assert.Empty(t, st.ModelConfig.OutputType, st.Name)
			assert.NotContains(t, st.CallSiteFields, callsite.FieldOutputType, st.Name)
		}
	}
}

// A model call that records an output type of its own keeps it.
func TestVercelModelCallKeepsItsOwnOutputType(t *testing.T) {
	td := vercelObjectCall(t, nil)
	td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(1).Attributes().PutStr("gen_ai.output.type", "text")
	c, _, _ := Build(td, plog.NewLogs())
	assert.Equal(t, "text", c.Steps[0].ModelConfig.OutputType)
}

// An ai.schema that is no JSON object is reported, and asks for nothing.
func TestVercelSchemaThatIsNoObject(t *testing.T) {
	for _, bad := range []string{`"object"`, `[{"type":"object"}]`, `{"type":"object"`, `not json`} {
		c, findings, _ := Build(vercelObjectCall(t, func(outer ptrace.Span) { outer.Attributes().PutStr("ai.schema", bad) }), plog.NewLogs())
		require.Len(t, findings, 1, bad)
		assert.Equal(t, replaycase.ReasonInvalidParameter, findings[0].Code, bad)
		assert.Contains(t, findings[0].Detail, "ai.schema", bad)
		assert.Empty(t, c.Steps[0].ModelConfig.OutputType, bad)
	}
}

// openllmetry-instrumentation-openai's span of a chat.completions call made with a json_schema
// response_format: it records only the schema, json.dumps'd (Python's ", " and ": "), under
// gen_ai.request.structured_output_schema, beside the legacy indexed prompt and completion.
func openLLMetryStructuredOutputSpan(schema any) map[string]any {
	return map[string]any{
		"llm.request.type":                        "chat",
		"gen_ai.system":                           "openai",
		"gen_ai.request.model":                    "gpt-4o-mini",
		"gen_ai.request.structured_output_schema": schema,
		"gen_ai.prompt.0.role":                    "user",
		"gen_ai.prompt.0.content":                 "Give me a recipe for scrambled eggs.",
		"gen_ai.response.model":                   "gpt-4o-mini-2024-07-18",
		"gen_ai.response.id":                      "chatcmpl-structured",
		"gen_ai.usage.prompt_tokens":              int64(20),
		"gen_ai.usage.completion_tokens":          int64(12),
		"gen_ai.completion.0.finish_reason":       "stop",
		"gen_ai.completion.0.role":                "assistant",
		"gen_ai.completion.0.content":             `{"name":"Scrambled Eggs"}`,
	}
}

func TestOpenLLMetryStructuredOutputSchemaAsksForJSON(t *testing.T) {
	schema := `{"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"], "additionalProperties": false}`
	c, findings, _ := Build(attributeSpan(t, "openai.chat", openLLMetryStructuredOutputSpan(schema), 1), plog.NewLogs())
	require.Empty(t, findings)
	st := c.Steps[0]
	assert.Equal(t, "json", st.ModelConfig.OutputType)
	assert.Empty(t, st.ModelConfig.ResponseFormat, "the schema alone is not the format object sent")
	assert.Contains(t, st.CallSiteFields, callsite.FieldOutputType)
}

func TestOpenLLMetryStructuredOutputSchemaThatIsNoObject(t *testing.T) {
	for _, bad := range []any{`"name"`, `[]`, `{"type": "object"`, int64(3)} {
		c, findings, _ := Build(attributeSpan(t, "openai.chat", openLLMetryStructuredOutputSpan(bad), 1), plog.NewLogs())
		require.Len(t, findings, 1, bad)
		assert.Equal(t, replaycase.ReasonInvalidParameter, findings[0].Code, bad)
		assert.Contains(t, findings[0].Detail, "gen_ai.request.structured_output_schema", bad)
		assert.Empty(t, c.Steps[0].ModelConfig.OutputType, bad)
	}
}
