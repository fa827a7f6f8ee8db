package normalize

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/replaycase"
)

// currentRun is a multi-agent run written as the current GenAI semantic conventions
// (open-telemetry/semantic-conventions-genai, model/gen-ai/spans.yaml and events.yaml)
// describe it: an invoke_workflow root, an in-process agent, a remote agent service, model
// calls with cache and reasoning usage, a retrieval, a failed call with its exception event,
// and evaluation events.
type currentRun struct {
	td    ptrace.Traces
	ld    plog.Logs
	spans ptrace.SpanSlice
	lrs   plog.LogRecordSlice
	next  byte
}

func newCurrentRun() *currentRun {
	r := &currentRun{td: ptrace.NewTraces(), ld: plog.NewLogs()}
	rs := r.td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "support-crew")
	r.spans = rs.ScopeSpans().AppendEmpty().Spans()
	r.lrs = r.ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
	return r
}

var currentTrace = pcommon.TraceID{0xc0, 0xde}

// span adds a span that starts one second after the previous one.
func (r *currentRun) span(name string, kind ptrace.SpanKind, parent *ptrace.Span, attrs map[string]any) ptrace.Span {
	r.next++
	sp := r.spans.AppendEmpty()
	sp.SetTraceID(currentTrace)
	sp.SetSpanID(pcommon.SpanID{r.next})
	if parent != nil {
		sp.SetParentSpanID(parent.SpanID())
	}
	sp.SetName(name)
	sp.SetKind(kind)
	start := pcommon.Timestamp(1_800_000_000_000_000_000 + uint64(r.next)*1_000_000_000)
	sp.SetStartTimestamp(start)
	sp.SetEndTimestamp(start + 500_000_000)
	if err := sp.Attributes().FromRaw(attrs); err != nil {
		panic(err)
	}
	return sp
}

// event adds a log record event with its fields as attributes, as semconv >= 1.37 events are
// written; on is the span it belongs to (nil: none).
func (r *currentRun) event(name string, severity plog.SeverityNumber, on *ptrace.Span, attrs map[string]any) {
	lr := r.lrs.AppendEmpty()
	lr.SetEventName(name)
	lr.SetSeverityNumber(severity)
	lr.SetTraceID(currentTrace)
	if on != nil {
		lr.SetSpanID(on.SpanID())
	}
	if err := lr.Attributes().FromRaw(attrs); err != nil {
		panic(err)
	}
}

func TestCurrentSemanticConventions(t *testing.T) {
	r := newCurrentRun()
	workflow := r.span("invoke_workflow support_pipeline", ptrace.SpanKindInternal, nil, map[string]any{
		"gen_ai.operation.name": "invoke_workflow", "gen_ai.workflow.name": "support_pipeline",
		"gen_ai.input.messages": `[{"role":"user","parts":[{"type":"text","content":"Why was I charged twice?"}]}]`,
	})
	triage := r.span("invoke_agent triage", ptrace.SpanKindInternal, &workflow, map[string]any{
		"gen_ai.operation.name": "invoke_agent", "gen_ai.provider.name": "anthropic", "gen_ai.agent.name": "triage",
	})
	chat := r.span("chat claude-sonnet-4", ptrace.SpanKindClient, &triage, map[string]any{
		"gen_ai.operation.name": "chat", "gen_ai.provider.name": "anthropic", "gen_ai.request.model": "claude-sonnet-4",
		"gen_ai.response.id": "msg_01", "gen_ai.request.top_k": 40.0,
		"gen_ai.usage.input_tokens": 1200, "gen_ai.usage.output_tokens": 300,
		"gen_ai.usage.cache_read.input_tokens": 800, "gen_ai.usage.cache_creation.input_tokens": 200,
		"gen_ai.usage.reasoning.output_tokens": 120,
		"gen_ai.input.messages":                `[{"role":"user","parts":[{"type":"text","content":"Why was I charged twice?"}]}]`,
		"gen_ai.output.messages":               `[{"role":"assistant","parts":[{"type":"text","content":"Let me look up your invoices."}],"finish_reason":"stop"}]`,
	})
	retrieval := r.span("retrieval invoices", ptrace.SpanKindClient, &triage, map[string]any{
		"gen_ai.operation.name": "retrieval", "gen_ai.data_source.id": "invoices",
		"gen_ai.retrieval.query.text": "duplicate charge March", "gen_ai.request.top_k": 2.0,
		"gen_ai.retrieval.documents": []any{
			map[string]any{"id": "inv-17", "score": 0.93, "title": "March invoice"},
			map[string]any{"id": "inv-18"},
		},
	})
	billing := r.span("invoke_agent Billing Assistant", ptrace.SpanKindClient, &workflow, map[string]any{
		"gen_ai.operation.name": "invoke_agent", "gen_ai.provider.name": "openai", "gen_ai.agent.name": "Billing Assistant",
		"gen_ai.agent.id": "asst_5j66", "gen_ai.request.model": "gpt-4o", "server.address": "api.openai.com",
		"gen_ai.usage.input_tokens": 400, "gen_ai.usage.output_tokens": 90,
	})
	retry := r.span("chat gpt-4o", ptrace.SpanKindClient, &workflow, map[string]any{
		"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-4o",
		"gen_ai.usage.input_tokens": 500, "gen_ai.usage.output_tokens": 40, "gen_ai.usage.cache_write.input_tokens": 64,
		"gen_ai.input.messages":  `[{"role":"user","parts":[{"type":"text","content":"Summarise the refund."}]}]`,
		"gen_ai.output.messages": `[{"role":"assistant","parts":[{"type":"text","content":"Refunded 12 EUR."}],"finish_reason":"stop"}]`,
	})
	failed := r.span("chat gpt-4o", ptrace.SpanKindClient, &workflow, map[string]any{
		"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-4o",
	})
	failed.Status().SetCode(ptrace.StatusCodeError)
	r.event("gen_ai.client.operation.exception", plog.SeverityNumberWarn, &failed, map[string]any{
		"exception.type": "openai.RateLimitError", "exception.message": "Rate limit reached for gpt-4o",
		"exception.stacktrace": "Traceback (most recent call last): ...",
	})
	r.event("gen_ai.evaluation.result", plog.SeverityNumberInfo, &chat, map[string]any{
		"gen_ai.evaluation.name": "Relevance", "gen_ai.evaluation.score.value": 4.0, "gen_ai.evaluation.score.label": "relevant",
		"gen_ai.evaluation.explanation": "Answers the billing question.", "gen_ai.response.id": "msg_01",
	})
	r.event("gen_ai.evaluation.result", plog.SeverityNumberInfo, nil, map[string]any{
		"gen_ai.evaluation.name": "IntentResolution", "gen_ai.evaluation.score.label": "pass", "gen_ai.response.id": "chatcmpl-9",
	})
	r.event("gen_ai.evaluation.result", plog.SeverityNumberInfo, &retry, map[string]any{
		"gen_ai.evaluation.name": "Groundedness", "gen_ai.evaluation.score.value": "high",
	})

	c, findings, genAI := Build(r.td, r.ld)
	require.True(t, genAI)

	assert.Equal(t, "support_pipeline", c.WorkflowName, "the workflow root is the case")
	assert.Equal(t, workflow.SpanID().String(), c.Provenance.RootSpanID)
	assert.Empty(t, c.AgentInvocation, "a workflow is not an agent invocation")

	steps := map[string]replaycase.Step{}
	for _, st := range c.Steps {
		steps[st.SpanID] = st
	}
	id := func(sp ptrace.Span) string { return sp.SpanID().String() }

	assert.Equal(t, "internal", steps[id(triage)].AgentInvocation)
	assert.Equal(t, "triage", steps[id(triage)].AgentName)
	remote := steps[id(billing)]
	assert.Equal(t, "client", remote.AgentInvocation, "an invoke_agent CLIENT span is a remote agent service")
	assert.Equal(t, "Billing Assistant", remote.AgentName)
	assert.Equal(t, replaycase.Usage{InputTokens: 400, OutputTokens: 90, TotalTokens: 490}, remote.Usage)

	assert.Equal(t, replaycase.Usage{InputTokens: 1200, OutputTokens: 300, CacheReadInputTokens: 800, CacheWriteInputTokens: 200,
		ReasoningOutputTokens: 120, TotalTokens: 1500}, steps[id(chat)].Usage)
	assert.Equal(t, int64(64), steps[id(retry)].Usage.CacheWriteInputTokens, "the newer cache_write name")
	forty := int64(40)
	assert.Equal(t, &forty, steps[id(chat)].ModelConfig.TopK, "gen_ai.request.top_k of a model call is top-k sampling")
	assert.Nil(t, steps[id(retrieval)].ModelConfig.TopK, "of a retrieval, the documents asked for")

	ret := steps[id(retrieval)].Retrieval
	require.NotNil(t, ret)
	topK, score := int64(2), 0.93
	assert.Equal(t, &replaycase.Retrieval{DataSource: "invoices", Query: "duplicate charge March", TopK: &topK, SpanID: id(retrieval),
		Documents: []replaycase.Document{{ID: "inv-17", Score: &score}, {ID: "inv-18"}}}, ret)

	assert.Equal(t, replaycase.StepError, steps[id(failed)].Status)
	assert.Equal(t, "openai.RateLimitError", steps[id(failed)].Error, "the exception names the error the span did not")
	assert.Equal(t, []replaycase.Exception{{Type: "openai.RateLimitError", Message: "Rate limit reached for gpt-4o",
		Stacktrace: "Traceback (most recent call last): ..."}}, steps[id(failed)].Exceptions)

	four := 4.0
	assert.Equal(t, []replaycase.Evaluation{
		{Name: "Relevance", ScoreValue: &four, ScoreLabel: "relevant", Explanation: "Answers the billing question.", ResponseID: "msg_01", SpanID: id(chat)},
		{Name: "Groundedness", SpanID: id(retry)},
		{Name: "IntentResolution", ScoreLabel: "pass", ResponseID: "chatcmpl-9"},
	}, c.Evaluations)
	var scoreProblems []replaycase.Reason
	for _, f := range findings {
		if f.Code == replaycase.ReasonUnparseableContent {
			scoreProblems = append(scoreProblems, f)
		}
	}
	assert.Equal(t, []replaycase.Reason{{Code: replaycase.ReasonUnparseableContent, SpanID: id(retry),
		Detail: `gen_ai.evaluation.result "Groundedness": score high is not a number`}}, scoreProblems)

	// The case totals count model calls; the remote agent's usage stays on its step.
	assert.Equal(t, int64(1200+500), c.Usage.InputTokens)
	assert.Equal(t, int64(800), c.Usage.CacheReadInputTokens)
	assert.Equal(t, int64(200+64), c.Usage.CacheWriteInputTokens)
	assert.Equal(t, int64(120), c.Usage.ReasoningOutputTokens)

	assertRoundTrip(t, c)
}

// The same events written as span events (attributes on the event) read the same.
func TestEvaluationAndExceptionAsSpanEvents(t *testing.T) {
	r := newCurrentRun()
	sp := r.span("chat gpt-4o", ptrace.SpanKindClient, nil, map[string]any{"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o"})
	sp.Status().SetCode(ptrace.StatusCodeError)
	ex := sp.Events().AppendEmpty()
	ex.SetName("gen_ai.client.operation.exception")
	ex.Attributes().PutStr("exception.message", "timed out")
	ev := sp.Events().AppendEmpty()
	ev.SetName("gen_ai.evaluation.result")
	ev.Attributes().PutStr("gen_ai.evaluation.name", "Fluency")
	ev.Attributes().PutDouble("gen_ai.evaluation.score.value", 0.5)
	c, _, genAI := Build(r.td, plog.NewLogs())
	require.True(t, genAI)
	require.Len(t, c.Steps, 1)
	assert.Equal(t, "timed out", c.Steps[0].Error)
	assert.Equal(t, []replaycase.Exception{{Message: "timed out"}}, c.Steps[0].Exceptions)
	half := 0.5
	assert.Equal(t, []replaycase.Evaluation{{Name: "Fluency", ScoreValue: &half, SpanID: sp.SpanID().String()}}, c.Evaluations)
	assertRoundTrip(t, c)
}
