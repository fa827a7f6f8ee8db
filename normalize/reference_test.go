package normalize

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/replaycase"
)

// The reference runs in testdata/reference are other projects' recordings (see SOURCES.md
// there). Most are Langfuse API exports, converted back to OTLP here: each observation is a
// span whose attributes, resource and scope are in its metadata. Langfuse moved the content it
// recognised into the observation's input/output and deleted it from the attributes; that
// content is NOT put back, so where it is missing the case is quarantined for that reason.

func referenceFile(t *testing.T, name string) []byte {
	b, err := os.ReadFile(filepath.Join(testfixtures.Dir(), "..", "reference", name))
	require.NoError(t, err)
	return b
}

func traceID(t *testing.T, s string) (id pcommon.TraceID) {
	b, err := hex.DecodeString(s)
	require.NoError(t, err, s)
	copy(id[:], b)
	return id
}

func spanID(t *testing.T, s string) (id pcommon.SpanID) {
	b, err := hex.DecodeString(s)
	require.NoError(t, err, s)
	copy(id[:], b)
	return id
}

// langfuseTraces converts a Langfuse export to OTLP: one trace.
func langfuseTraces(t *testing.T, name string) ptrace.Traces {
	var export struct {
		Observations []struct {
			ID, TraceID, Name, StartTime, EndTime string
			ParentObservationID                   *string `json:"parentObservationId"`
			Level                                 string
			StatusMessage                         *string
			Metadata                              json.RawMessage
		}
	}
	require.NoError(t, json.Unmarshal(referenceFile(t, name), &export))
	td := ptrace.NewTraces()
	for _, o := range export.Observations {
		var md struct {
			Attributes         map[string]any `json:"attributes"`
			ResourceAttributes map[string]any `json:"resourceAttributes"`
			Scope              struct{ Name, Version string }
		}
		raw := o.Metadata
		var s string
		if json.Unmarshal(raw, &s) == nil { // metadata is a JSON string in most exports
			raw = json.RawMessage(s)
		}
		require.NoError(t, json.Unmarshal(raw, &md), o.ID)
		rs := td.ResourceSpans().AppendEmpty()
		require.NoError(t, rs.Resource().Attributes().FromRaw(md.ResourceAttributes))
		ss := rs.ScopeSpans().AppendEmpty()
		ss.Scope().SetName(md.Scope.Name)
		ss.Scope().SetVersion(md.Scope.Version)
		sp := ss.Spans().AppendEmpty()
		sp.SetTraceID(traceID(t, o.TraceID))
		sp.SetSpanID(spanID(t, o.ID))
		if o.ParentObservationID != nil {
			sp.SetParentSpanID(spanID(t, *o.ParentObservationID))
		}
		sp.SetName(o.Name)
		for _, ts := range []struct {
			s   string
			set func(pcommon.Timestamp)
		}{{o.StartTime, sp.SetStartTimestamp}, {o.EndTime, sp.SetEndTimestamp}} {
			tm, err := time.Parse(time.RFC3339Nano, ts.s)
			require.NoError(t, err)
			ts.set(pcommon.NewTimestampFromTime(tm))
		}
		if o.Level == "ERROR" {
			sp.Status().SetCode(ptrace.StatusCodeError)
			if o.StatusMessage != nil {
				sp.Status().SetMessage(*o.StatusMessage)
			}
		}
		require.NoError(t, sp.Attributes().FromRaw(md.Attributes))
	}
	return td
}

// jsSpanTraces converts JS ReadableSpan JSON (the Vercel v6 capture) to OTLP, one Traces per
// trace id, in file order.
func jsSpanTraces(t *testing.T, name string) []ptrace.Traces {
	var spans []struct {
		Name         string
		SpanContext  struct{ TraceID, SpanID string }
		ParentSpanID string `json:"parentSpanId"`
		Attributes   map[string]any
		Status       struct{ Code int }
		StartTime    [2]int64
		EndTime      [2]int64
		Events       []struct {
			Name       string
			Attributes map[string]any
		}
	}
	require.NoError(t, json.Unmarshal(referenceFile(t, name), &spans))
	byTrace := map[string]ptrace.Traces{}
	var order []string
	for _, s := range spans {
		td, ok := byTrace[s.SpanContext.TraceID]
		if !ok {
			td = ptrace.NewTraces()
			byTrace[s.SpanContext.TraceID] = td
			order = append(order, s.SpanContext.TraceID)
		}
		sp := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
		sp.SetTraceID(traceID(t, s.SpanContext.TraceID))
		sp.SetSpanID(spanID(t, s.SpanContext.SpanID))
		if s.ParentSpanID != "" {
			sp.SetParentSpanID(spanID(t, s.ParentSpanID))
		}
		sp.SetName(s.Name)
		sp.SetStartTimestamp(pcommon.Timestamp(s.StartTime[0]*1e9 + s.StartTime[1]))
		sp.SetEndTimestamp(pcommon.Timestamp(s.EndTime[0]*1e9 + s.EndTime[1]))
		sp.Status().SetCode(ptrace.StatusCode(s.Status.Code))
		require.NoError(t, sp.Attributes().FromRaw(s.Attributes))
		for _, e := range s.Events {
			ev := sp.Events().AppendEmpty()
			ev.SetName(e.Name)
			require.NoError(t, ev.Attributes().FromRaw(e.Attributes))
		}
	}
	out := make([]ptrace.Traces, 0, len(order))
	for _, id := range order {
		out = append(out, byTrace[id])
	}
	return out
}

// attributeSpan makes a one-span trace (a plain model call) from a map of span attributes.
func attributeSpan(t *testing.T, name string, attrs map[string]any, n byte) ptrace.Traces {
	td := ptrace.NewTraces()
	sp := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	sp.SetTraceID(pcommon.TraceID{n, 0xaa})
	sp.SetSpanID(pcommon.SpanID{n, 0xbb})
	sp.SetName(name)
	require.NoError(t, sp.Attributes().FromRaw(attrs))
	return td
}

type verdict struct {
	status    replaycase.Status
	reasons   []string // distinct reason codes, sorted
	llmSteps  int
	toolCalls int
}

func summary(c *replaycase.Case, findings []replaycase.Reason) verdict {
	v := verdict{status: replaycase.StatusAccepted}
	seen := map[string]bool{}
	for _, f := range findings {
		v.status = replaycase.StatusQuarantined
		if !seen[f.Code] {
			seen[f.Code] = true
			v.reasons = append(v.reasons, f.Code)
		}
	}
	sort.Strings(v.reasons)
	for _, st := range c.Steps {
		if st.Kind == replaycase.StepLLM {
			v.llmSteps++
		}
	}
	v.toolCalls = len(c.ToolCalls)
	return v
}

func TestReferenceRuns(t *testing.T) {
	for _, tc := range []struct {
		file string
		want verdict
		why  string
	}{
		{"otel-genai_agent-framework-agent-run-tool-call.langfuse-export.json",
			verdict{replaycase.StatusQuarantined, []string{replaycase.ReasonNoInputMessages, replaycase.ReasonNoModelOutput, replaycase.ReasonToolCallWithoutResult}, 2, 1},
			"Langfuse moved gen_ai.input/output.messages and gen_ai.tool.call.arguments/result out of the span attributes"},
		{"otel-genai_pydantic-ai-1.26-multi-agent-parallel-tools.langfuse-export.json",
			verdict{replaycase.StatusQuarantined, []string{replaycase.ReasonNoInputMessages, replaycase.ReasonNoModelOutput}, 4, 3},
			"Langfuse moved the chat spans' gen_ai.input/output.messages out; the parallel tool calls kept tool_arguments/tool_response"},
		{"otel-genai-deprecated-events_pydantic-ai-0.2-events-attribute.langfuse-export.json",
			verdict{replaycase.StatusAccepted, nil, 1, 0}, "the semconv 1.28–1.36 events are in the span attribute `events`"},
		{"openinference_openai-agents-agent-run-tool-call.langfuse-export.json",
			verdict{replaycase.StatusQuarantined, []string{replaycase.ReasonUnparseableContent}, 2, 1},
			"the flattened messages are kept, but llm.invocation_parameters is the response's echo (id resp_…), so the requested model is unknown"},
		{"openinference+gcp-vertex-agent_google-adk-agent-run-tool-call.langfuse-export.json",
			verdict{replaycase.StatusQuarantined, []string{replaycase.ReasonNoModelOutput}, 2, 1},
			"ADK's llm.output_messages record the model's function call by name only, without arguments"},
		{"indexed-prompt_koog-agent-run-tool-calls.langfuse-export.json",
			verdict{replaycase.StatusAccepted, nil, 2, 2}, "Koog's indexed prompt/completion attributes are kept"},
		{"vercel-ai_v5-generateText-tool-call.langfuse-export.json",
			verdict{replaycase.StatusQuarantined, []string{replaycase.ReasonNoInputMessages, replaycase.ReasonNoModelOutput, replaycase.ReasonToolCallWithoutResult}, 1, 1},
			"Langfuse moved ai.prompt.messages, ai.response.* and ai.toolCall.args/result out"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			c, findings, genAI := Build(langfuseTraces(t, tc.file), plog.NewLogs())
			require.True(t, genAI)
			require.Equal(t, tc.want, summary(c, findings), tc.why)
			for _, call := range c.ToolCalls {
				require.NotEmpty(t, call.Name)
			}
		})
	}
}

func TestReferenceRunDetails(t *testing.T) {
	t.Run("koog", func(t *testing.T) {
		c, _, _ := Build(langfuseTraces(t, "indexed-prompt_koog-agent-run-tool-calls.langfuse-export.json"), plog.NewLogs())
		require.Len(t, c.ToolCalls, 2)
		require.Equal(t, replaycase.ToolCall{ID: "call_n2HaWg9KFP0BZDqXv6G4b3nJ", Name: "HelloTool", Arguments: `{"name": "Bob"}`, Result: "Hello my darling Bob!",
			RequestedBy: "042f9350c3729147", SpanID: "66f269083a2fff81"}, c.ToolCalls[0])
		require.Equal(t, "Hello my darling Bob! And, bye my dear Bob!", c.FinalOutput.Parts[0].Content)
		// The assistant's tool-call turns are recorded with role "tool" and the calls as JSON text.
		second := c.Steps[len(c.Steps)-1]
		require.Equal(t, "assistant", second.InputMessages[2].Role)
		require.Equal(t, "tool_call", second.InputMessages[2].Parts[0].Type)
		require.Equal(t, replaycase.Part{Type: "tool_call_response", ID: "call_n2HaWg9KFP0BZDqXv6G4b3nJ", Response: "Hello my darling Bob!"}, second.InputMessages[3].Parts[0])
	})
	t.Run("openai-agents", func(t *testing.T) {
		c, _, _ := Build(langfuseTraces(t, "openinference_openai-agents-agent-run-tool-call.langfuse-export.json"), plog.NewLogs())
		require.Equal(t, []string{convOpenInference}, c.Provenance.Conventions)
		require.Equal(t, "Agent workflow", c.AgentName)
		require.Equal(t, `{"city":"Tokyo"}`, c.ToolCalls[0].Arguments)
		require.Equal(t, "The weather in Tokyo is sunny.", c.ToolCalls[0].Result)
		require.Equal(t, "get_weather", c.ToolDefinitions[0].Name)
		require.Positive(t, c.Usage.CacheReadInputTokens+c.Usage.InputTokens)
	})
	t.Run("google-adk mixed conventions", func(t *testing.T) {
		c, _, _ := Build(langfuseTraces(t, "openinference+gcp-vertex-agent_google-adk-agent-run-tool-call.langfuse-export.json"), plog.NewLogs())
		require.Equal(t, []string{convOpenInference, convOTel}, c.Provenance.Conventions)
		for _, st := range c.Steps {
			for _, m := range st.InputMessages {
				require.NotEqual(t, "model", m.Role, "Gemini's role model is normalized to assistant")
			}
		}
		require.Equal(t, "say_hello", c.ToolCalls[0].Name)
		require.Equal(t, "f6e4c65297e40c96", c.ToolCalls[0].RequestedBy, "the id-less request joins its execution by name")
	})
	t.Run("pydantic-ai 1.26 parallel tools", func(t *testing.T) {
		c, _, _ := Build(langfuseTraces(t, "otel-genai_pydantic-ai-1.26-multi-agent-parallel-tools.langfuse-export.json"), plog.NewLogs())
		names := []string{}
		for _, call := range c.ToolCalls {
			names = append(names, call.Name)
			require.Equal(t, `{"topic":"programming"}`, call.Arguments)
			require.NotEmpty(t, call.Result)
		}
		require.ElementsMatch(t, []string{"get_pun_suggestion", "get_dad_joke_suggestion", "get_one_liner_suggestion"}, names)
	})
}

func TestVercelAIv6RawSpans(t *testing.T) {
	traces := jsSpanTraces(t, "vercel-ai_v6-raw-spans-generate-stream-object-embed.json")
	require.Len(t, traces, 10, "the capture has no parent ids: every span is a trace of its own")
	accepted := 0
	for _, td := range traces {
		c, findings, genAI := Build(td, plog.NewLogs())
		require.True(t, genAI)
		name := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Name()
		v := summary(c, findings)
		switch {
		case name == "ai.generateText.doGenerate" || name == "ai.generateObject.doGenerate" || name == "ai.streamText.doStream":
			require.Equal(t, verdict{replaycase.StatusAccepted, nil, 1, 0}, v, name)
			require.Equal(t, "openai", c.ModelConfig.Provider, "openai.responses is the openai provider")
			require.Equal(t, []string{convOTel, convVercelAI}, c.Steps[0].Conventions)
			require.NotEmpty(t, c.FinalOutput.Parts[0].Content)
			require.Equal(t, "stop", c.FinalOutput.FinishReason)
			accepted++
		default: // the outer SDK call or an embedding alone: no model call in this trace
			require.Equal(t, verdict{replaycase.StatusQuarantined, []string{replaycase.ReasonNoLLMSteps}, 0, 0}, v, name)
		}
	}
	require.Equal(t, 4, accepted)
}

func TestOpenLLMetryIndexedSnapshot(t *testing.T) {
	var spans []struct {
		Name       string
		Attributes map[string]any
	}
	require.NoError(t, json.Unmarshal(referenceFile(t, "openllmetry_openai-chat-indexed-prompt.snapshot.json"), &spans))
	for i, s := range spans {
		c, findings, _ := Build(attributeSpan(t, s.Name, s.Attributes, byte(i)), plog.NewLogs())
		require.Empty(t, findings)
		require.Equal(t, []string{convOpenLLMetry, convOTel}, c.Provenance.Conventions)
		st := c.Steps[0]
		require.Equal(t, replaycase.StepLLM, st.Kind)
		require.Equal(t, "openai", st.ModelConfig.Provider, `the old capitalised "OpenAI"`)
		require.Equal(t, []replaycase.Message{textMsg("user", "Write a one-line joke")}, st.InputMessages)
		require.Equal(t, replaycase.Message{Role: "assistant", FinishReason: "stop", Parts: []replaycase.Part{{Type: "text", Content: "I used to play piano by ear, but now I use my hands."}}}, st.OutputMessages[0])
		require.Equal(t, replaycase.Usage{InputTokens: 12, OutputTokens: 16, TotalTokens: 28}, st.Usage)
	}
}

// The OpenInference translation of a semconv span (both hand-written by OpenInference) gives
// the same messages, tool call and usage.
func TestSemconvAndOpenInferenceClientSpansAgree(t *testing.T) {
	load := func(name string, n byte) replaycase.Step {
		var attrs map[string]any
		require.NoError(t, json.Unmarshal(referenceFile(t, name), &attrs))
		c, findings, _ := Build(attributeSpan(t, "chat gpt-4", attrs, n), plog.NewLogs())
		require.Empty(t, findings)
		return c.Steps[0]
	}
	otel := load("otel-genai_client-span-tool-calls.attributes.json", 1)
	oi := load("openinference_client-span-tool-calls.attributes.json", 2)
	require.Equal(t, otel.InputMessages, oi.InputMessages)
	require.Equal(t, otel.Usage, oi.Usage)
	require.Equal(t, otel.ModelConfig, oi.ModelConfig)
	// The OpenInference translation drops the finish reason and the response id.
	require.Equal(t, "stop", otel.OutputMessages[0].FinishReason)
	otel.OutputMessages[0].FinishReason = ""
	require.Equal(t, otel.OutputMessages, oi.OutputMessages)
}
