package normalize

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/callsite"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/replaycase"
)

const (
	systemPrompt = "You are a weather assistant. Context:\nParis has a temperate oceanic climate.\nUse get_weather(city, unit) for live conditions."
	userPrompt   = "What is the weather in Paris today?"
	toolArgs     = `{"city":"Paris","unit":"celsius"}`
	toolResult   = `{"city":"Paris","temperature":14,"unit":"celsius","sky":"overcast"}`
	finalAnswer  = `Answer #2: based on {"city":"Paris","temperature":14,"unit":"celsius","sky":"overcast"} it is mild in Paris.`
)

func build(t *testing.T, run string) (*replaycase.Case, []replaycase.Reason) {
	t.Helper()
	c, findings, genAI := Build(testfixtures.Traces(t, run), testfixtures.Logs(t, run))
	require.True(t, genAI)
	return c, findings
}

func textMsg(role, content string) replaycase.Message {
	return replaycase.Message{Role: role, Parts: []replaycase.Part{{Type: "text", Content: content}}}
}

func TestBuildOTelEvents(t *testing.T) {
	c, findings := build(t, testfixtures.OTelEvents)
	assert.Empty(t, findings)

	assert.Equal(t, replaycase.ID("d4263ddf29d4d69a7c3c210379b94a58", "8b727ad3b0efe21a"), c.CaseID)
	assert.Equal(t, replaycase.SchemaVersion, c.SchemaVersion)
	assert.Equal(t, adapterVersion, c.AdapterVersion)
	assert.Equal(t, replaycase.Provenance{
		TraceID: "d4263ddf29d4d69a7c3c210379b94a58", RootSpanID: "8b727ad3b0efe21a",
		ServiceName: "holdout-agent-otel", ServiceVersion: "1.0.0", Services: []string{"holdout-agent-otel"},
		Conventions: []string{convOpenInference, convOTel, convOTelEvents}, SpanCount: 5, EventCount: 8,
	}, c.Provenance)
	assert.Equal(t, "weather-bot", c.AgentName)
	assert.Equal(t, "conv-holdout-1", c.ConversationID)
	assert.Equal(t, int64(1796006715631000000), c.StartTime.UnixNano())
	assert.Equal(t, int64(1796006715680967785), c.EndTime.UnixNano())

	assert.Equal(t, []replaycase.Message{textMsg("system", systemPrompt), textMsg("user", userPrompt)}, c.InputMessages)
	require.NotNil(t, c.FinalOutput)
	assert.Equal(t, replaycase.Message{Role: "assistant", FinishReason: "stop", Parts: []replaycase.Part{{Type: "text", Content: finalAnswer}}}, *c.FinalOutput)

	temp, maxTokens := 0.2, int64(256)
	assert.Equal(t, replaycase.ModelConfig{Provider: "openai", RequestModel: "gpt-4o-mini", ResponseModel: "gpt-4o-mini-2024-07-18", Temperature: &temp, MaxTokens: &maxTokens}, c.ModelConfig)
	assert.Equal(t, replaycase.Usage{InputTokens: 79 + 101, OutputTokens: 17 + 17, TotalTokens: 96 + 118}, c.Usage)

	assert.Equal(t, []replaycase.ToolCall{{
		ID: "call_1_0", Name: "get_weather", Arguments: toolArgs, Result: toolResult,
		RequestedBy: "52f9b6ad1109142e", SpanID: "7315edc4f9534814",
	}}, c.ToolCalls)

	s91, s77 := 0.91, 0.77
	assert.Equal(t, []replaycase.Retrieval{{
		DataSource: "kb-v3", Query: userPrompt, SpanID: "50a2c2aa5482a2fb",
		Documents: []replaycase.Document{
			{ID: "doc-paris-climate", Score: &s91, Content: "Paris has a temperate oceanic climate."},
			{ID: "doc-weather-api", Score: &s77, Content: "Use get_weather(city, unit) for live conditions."},
		},
	}}, c.RetrievalRefs)

	kinds := []replaycase.StepKind{}
	for i, st := range c.Steps {
		assert.Equal(t, i, st.Index)
		kinds = append(kinds, st.Kind)
	}
	assert.Equal(t, []replaycase.StepKind{replaycase.StepRetrieval, replaycase.StepLLM, replaycase.StepTool, replaycase.StepLLM}, kinds)

	first, second := c.Steps[1], c.Steps[3]
	assert.Equal(t, "chatcmpl-1", first.ResponseID)
	assert.Equal(t, []string{"tool_call"}, first.FinishReasons)
	assert.Equal(t, replaycase.Usage{InputTokens: 79, OutputTokens: 17, TotalTokens: 96}, first.Usage)
	assert.Equal(t, []replaycase.Message{{Role: "assistant", FinishReason: "tool_call", Parts: []replaycase.Part{
		{Type: "tool_call", ID: "call_1_0", Name: "get_weather", Arguments: toolArgs},
	}}}, first.OutputMessages)
	assert.Equal(t, []replaycase.Message{
		textMsg("system", systemPrompt),
		textMsg("user", userPrompt),
		{Role: "assistant", Parts: []replaycase.Part{{Type: "tool_call", ID: "call_1_0", Name: "get_weather", Arguments: toolArgs}}},
		{Role: "tool", Parts: []replaycase.Part{{Type: "tool_call_response", ID: "call_1_0", Response: toolResult}}},
	}, second.InputMessages)
	assert.Equal(t, "chatcmpl-2", second.ResponseID)
	assert.Equal(t, &replaycase.ToolCall{ID: "call_1_0", Name: "get_weather", Arguments: toolArgs, Result: toolResult, SpanID: "7315edc4f9534814"}, c.Steps[2].ToolCall)
}

// content keeps what must be equal whatever instrumentation recorded the run: it clears the
// ids, times and convention names that really differ between the recordings.
func content(c *replaycase.Case) replaycase.Case {
	out := *c
	out.CaseID, out.Provenance = "", replaycase.Provenance{}
	out.StartTime, out.EndTime = time.Time{}, time.Time{}
	out.ToolCalls = append([]replaycase.ToolCall(nil), c.ToolCalls...)
	for i := range out.ToolCalls {
		out.ToolCalls[i].RequestedBy, out.ToolCalls[i].SpanID = "", ""
	}
	out.RetrievalRefs = append([]replaycase.Retrieval(nil), c.RetrievalRefs...)
	for i := range out.RetrievalRefs {
		out.RetrievalRefs[i].SpanID = ""
	}
	out.Steps = append([]replaycase.Step(nil), c.Steps...)
	for i := range out.Steps {
		st := &out.Steps[i]
		st.SpanID, st.ParentSpanID, st.ServiceName, st.Conventions = "", "", "", nil
		st.StartTime, st.EndTime = time.Time{}, time.Time{}
		if st.ToolCall != nil {
			tc := *st.ToolCall
			tc.SpanID = ""
			st.ToolCall = &tc
		}
		if st.Retrieval != nil {
			r := *st.Retrieval
			r.SpanID = ""
			st.Retrieval = &r
		}
	}
	return out
}

// The three fixture runs are the same agent run recorded by three instrumentation libraries
// (OTel semconv 1.36 events, OpenLLMetry's >= 1.37 attributes, OpenInference). Their cases
// must agree field by field, except for what really differs in the telemetry.
func TestThreeInstrumentationsGiveTheSameCase(t *testing.T) {
	events, _ := build(t, testfixtures.OTelEvents)
	traceloop, findings := build(t, testfixtures.Traceloop)
	assert.Empty(t, findings)
	openinference, findings := build(t, testfixtures.OpenInference)
	assert.Empty(t, findings)
	assert.Equal(t, []string{convOpenInference, convOTel}, traceloop.Provenance.Conventions)
	assert.Equal(t, []string{convOpenInference, convOTel}, openinference.Provenance.Conventions)

	// What really differs in the telemetry:
	// - semconv 1.36 events do not record the tools offered; OpenLLMetry and OpenInference do;
	wantTools := []replaycase.ToolDefinition{{
		Type: "function", Name: "get_weather", Description: "Current weather for a city",
		Parameters: `{"properties":{"city":{"type":"string"},"unit":{"enum":["celsius","fahrenheit"],"type":"string"}},"required":["city"],"type":"object"}`,
	}}
	assert.Equal(t, wantTools, traceloop.ToolDefinitions)
	assert.Equal(t, wantTools, openinference.ToolDefinitions)
	assert.Empty(t, events.ToolDefinitions)
	// - only OpenInference recorded the seed (in llm.invocation_parameters);
	require.NotNil(t, openinference.ModelConfig.Seed)
	assert.Equal(t, int64(7), *openinference.ModelConfig.Seed)
	// - OpenInference names its spans "OpenAI Chat Completions" and sets their status to OK.
	for _, st := range openinference.Steps {
		if st.Kind == replaycase.StepLLM {
			assert.Equal(t, "OpenAI Chat Completions", st.Name)
			assert.Equal(t, replaycase.StepOK, st.Status)
		}
	}

	// One call-site ID scheme for all: over the fields all three recorded, each model call has
	// the same ID whatever recorded it. Each step's own ID covers what its telemetry recorded.
	// Each lists the version marker: a step recorded now has a version-2 id.
	assert.Equal(t, []string{callsite.FieldMaxTokens, callsite.FieldTemperature, callsite.FieldV2}, events.Steps[1].CallSiteFields)
	assert.Equal(t, []string{callsite.FieldMaxTokens, callsite.FieldTemperature, callsite.FieldTools, callsite.FieldV2}, traceloop.Steps[1].CallSiteFields)
	assert.Equal(t, []string{callsite.FieldMaxTokens, callsite.FieldSeed, callsite.FieldTemperature, callsite.FieldTools, callsite.FieldV2}, openinference.Steps[1].CallSiteFields)
	for _, i := range []int{1, 3} {
		common := events.Steps[i].CallSiteFields
		want := callsite.FromStep(&events.Steps[i]).ID(common)
		assert.Equal(t, events.Steps[i].CallSiteID, want)
		assert.Equal(t, want, callsite.FromStep(&traceloop.Steps[i]).ID(common), "traceloop step %d", i)
		assert.Equal(t, want, callsite.FromStep(&openinference.Steps[i]).ID(common), "openinference step %d", i)
	}
	assert.NotEqual(t, events.Steps[1].CallSiteID, events.Steps[3].CallSiteID)

	want := content(events)
	for name, c := range map[string]*replaycase.Case{"traceloop": traceloop, "openinference": openinference} {
		got := content(c)
		got.ToolDefinitions = nil
		got.ModelConfig.Seed = nil
		for i := range got.Steps {
			st := &got.Steps[i]
			st.ToolDefinitions, st.ModelConfig.Seed = nil, nil
			st.CallSiteID, st.CallSiteFields = want.Steps[i].CallSiteID, want.Steps[i].CallSiteFields
			if name == "openinference" && st.Kind == replaycase.StepLLM {
				st.Name, st.Status = want.Steps[i].Name, want.Steps[i].Status
			}
		}
		assert.Equal(t, want, got, name)
	}
}

func TestNoContentRunNamesTheMissingMessages(t *testing.T) {
	c, findings := build(t, testfixtures.OTelNoContent)
	codes := map[string][]string{}
	for _, f := range findings {
		codes[f.Code] = append(codes[f.Code], f.SpanID)
		assert.NotEmpty(t, f.Detail)
	}
	// Both model calls recorded no input content; the second recorded no output either (the
	// first's output is a tool call whose id and name are known but not its arguments).
	assert.Equal(t, map[string][]string{
		replaycase.ReasonNoInputMessages: {"3f0636d3714ecae1", "d54ee9ed4c744c13"},
		replaycase.ReasonNoModelOutput:   {"3f0636d3714ecae1", "d54ee9ed4c744c13"},
	}, codes)
	assert.Contains(t, findings[0].Detail, "no input messages")
	// The evidence that was found is kept: the tool call, ids and names, and the usage.
	require.Len(t, c.ToolCalls, 1)
	assert.Equal(t, "call_1_0", c.ToolCalls[0].ID)
	assert.Equal(t, "get_weather", c.ToolCalls[0].Name)
	assert.Equal(t, toolResult, c.ToolCalls[0].Result)
	assert.Equal(t, int64(214), c.Usage.TotalTokens)
}

func TestTraceWithoutGenAIIsNotACase(t *testing.T) {
	td := ptrace.NewTraces()
	sp := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	sp.SetTraceID([16]byte{1})
	sp.SetSpanID([8]byte{1})
	sp.SetName("GET /healthz")
	sp.Attributes().PutStr("http.request.method", "GET")
	_, _, genAI := Build(td, plog.NewLogs())
	assert.False(t, genAI)
}
