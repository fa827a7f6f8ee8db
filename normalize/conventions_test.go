package normalize

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/internal/pdatawalk"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/replaycase"
)

func eachSpan(td ptrace.Traces, f func(ptrace.Span)) {
	for s := range pdatawalk.Spans(td) {
		f(s.Span)
	}
}

// The same run with the semconv 1.28–1.36 events written as span events (as Semantic Kernel
// does) instead of log records gives the same case.
func TestEventsAsSpanEvents(t *testing.T) {
	want, _ := build(t, testfixtures.OTelEvents)
	td, ld := testfixtures.Traces(t, testfixtures.OTelEvents), testfixtures.Logs(t, testfixtures.OTelEvents)
	spans := map[pcommon.SpanID]ptrace.Span{}
	eachSpan(td, func(sp ptrace.Span) { spans[sp.SpanID()] = sp })
	for l := range pdatawalk.LogRecords(ld) {
		ev := spans[l.Record.SpanID()].Events().AppendEmpty()
		ev.SetName(eventName(l.Record))
		ev.SetTimestamp(l.Record.Timestamp())
		require.NoError(t, ev.Attributes().FromRaw(l.Record.Body().Map().AsRaw()))
	}
	got, findings, _ := Build(td, plog.NewLogs())
	assert.Empty(t, findings)
	want.Provenance.EventCount = 0
	assert.Equal(t, want, got)
}

// The >= 1.37 content attributes may be structured values instead of JSON strings.
func TestStructuredContentAttributes(t *testing.T) {
	want, _ := build(t, testfixtures.Traceloop)
	td := testfixtures.Traces(t, testfixtures.Traceloop)
	eachSpan(td, func(sp ptrace.Span) {
		for _, k := range []string{"gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.tool.definitions"} {
			if v, ok := sp.Attributes().Get(k); ok {
				var raw any
				require.NoError(t, json.Unmarshal([]byte(v.Str()), &raw))
				require.NoError(t, sp.Attributes().PutEmpty(k).FromRaw(raw))
			}
		}
	})
	got, findings, _ := Build(td, plog.NewLogs())
	assert.Empty(t, findings)
	assert.Equal(t, want, got)
}

// Semconv 1.26: gen_ai.content.prompt / gen_ai.content.completion span events.
func TestContentEvents(t *testing.T) {
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	root := spans.AppendEmpty()
	root.SetTraceID([16]byte{7})
	root.SetSpanID([8]byte{1})
	root.SetName("invoke_agent old-bot")
	root.Attributes().PutStr("gen_ai.operation.name", "invoke_agent")
	chat := spans.AppendEmpty()
	chat.SetTraceID([16]byte{7})
	chat.SetSpanID([8]byte{2})
	chat.SetParentSpanID([8]byte{1})
	chat.SetName("chat gpt-4")
	chat.Attributes().PutStr("gen_ai.system", "OpenAI")
	chat.Attributes().PutStr("gen_ai.request.model", "gpt-4")
	chat.Attributes().PutStr("gen_ai.usage.prompt_tokens", "12") // an old name, a number as a string
	chat.Attributes().PutInt("gen_ai.usage.completion_tokens", 3)
	prompt := chat.Events().AppendEmpty()
	prompt.SetName("gen_ai.content.prompt")
	prompt.Attributes().PutStr("gen_ai.prompt", `[{"role":"system","content":"Be brief."},{"role":"user","content":"Hi"}]`)
	completion := chat.Events().AppendEmpty()
	completion.SetName("gen_ai.content.completion")
	completion.Attributes().PutStr("gen_ai.completion", `[{"role":"assistant","content":"Hello."}]`)

	c, findings, genAI := Build(td, plog.NewLogs())
	require.True(t, genAI)
	assert.Empty(t, findings)
	assert.Equal(t, []string{convOTel, convOTelContentEvents}, c.Steps[0].Conventions)
	assert.Equal(t, []replaycase.Message{textMsg("system", "Be brief."), textMsg("user", "Hi")}, c.InputMessages)
	assert.Equal(t, "Hello.", c.FinalOutput.Parts[0].Content)
	assert.Equal(t, "openai", c.ModelConfig.Provider)
	assert.Equal(t, replaycase.Usage{InputTokens: 12, OutputTokens: 3, TotalTokens: 15}, c.Usage)
	assert.Equal(t, "old-bot", c.AgentName, "from the span name invoke_agent {name}")
}

func TestUnreadableContentIsAFinding(t *testing.T) {
	td := testfixtures.Traces(t, testfixtures.Traceloop)
	eachSpan(td, func(sp ptrace.Span) {
		if v, ok := sp.Attributes().Get("gen_ai.output.messages"); ok {
			s := v.Str()
			sp.Attributes().PutStr("gen_ai.output.messages", s[:len(s)/2]) // cut by a length limit
		}
		if v, ok := sp.Attributes().Get("gen_ai.tool.definitions"); ok {
			sp.Attributes().PutStr("gen_ai.tool.definitions", "{"+v.Str()) // not JSON
		}
	})
	_, findings, _ := Build(td, plog.NewLogs())
	codes := map[string]int{}
	for _, f := range findings {
		codes[f.Code]++
	}
	assert.Equal(t, 2, codes[replaycase.ReasonTruncatedContent], "%v", findings)
	assert.Equal(t, 2, codes[replaycase.ReasonUnparseableContent], "%v", findings)
	assert.Equal(t, 2, codes[replaycase.ReasonNoModelOutput], "the cut output cannot be read")
}

func TestQuirksTable(t *testing.T) {
	for in, want := range map[string]string{"tool_calls": "tool_call", "tool-calls": "tool_call", "TOOL_USE": "tool_call", "end_turn": "stop", "STOP": "stop", "MAX_TOKENS": "length", "weird": "weird"} {
		assert.Equal(t, want, FinishReason(in), in)
	}
	for in, want := range map[string]string{"OpenAI": "openai", "openai.responses": "openai", "openai.chat": "openai", "az.ai.openai": "azure.ai.openai", "azure.ai.openai": "azure.ai.openai", "gcp.vertex_ai": "gcp.vertex_ai", "vertex_ai": "gcp.vertex_ai", "aws.bedrock": "aws.bedrock", "Anthropic": "anthropic"} {
		assert.Equal(t, want, canonicalProvider(in), in)
	}
	for in, want := range map[string]string{"model": "assistant", "Assistant": "assistant", "human": "user", "tool": "tool"} {
		assert.Equal(t, want, canonicalRole(in), in)
	}
}
