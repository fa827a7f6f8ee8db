// Package costfixture holds the hand-checked cost cases of issue 14 as OTLP traces, so the
// processor's tests and the dataset readers' tests price the same runs and expect the same
// figures.
package costfixture

import (
	"crypto/sha256"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Run is one agent run with one chat call, and the cost the price table must give it.
type Run struct {
	Name                     string
	Provider, Model          string
	Start                    time.Time
	Input, Output, CacheRead int64
	CacheWrite, Reasoning    int64
	ReportedUSD              float64 // gen_ai.usage.cost on the chat span, when > 0
	WantStatus               string  // the step's cost_status
	WantTotalUSD             float64 // the cost of record; ignored when unpriced
	WantComputedUSD          float64 // the table's figure (equal to the total unless reported)
	WantTier, WantEffective  string
}

func day(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

// Runs are worked out by hand from data/genai-prices-0.2.3.json (USD per million tokens in the
// comments); pricing's own tests check the same figures part by part.
var Runs = []Run{
	// gpt-4o: input 2.5, output 10.
	{Name: "plain chat", Provider: "openai", Model: "gpt-4o", Start: day("2025-06-01T12:00:00Z"),
		Input: 1000, Output: 500, WantStatus: "computed", WantTotalUSD: 0.0075, WantComputedUSD: 0.0075},
	// gpt-4o-mini: input 0.15, cache read 0.075, output 0.6; 4000 uncached + 8000 cached.
	{Name: "cached input", Provider: "openai", Model: "gpt-4o-mini", Start: day("2025-06-01T12:00:00Z"),
		Input: 12000, CacheRead: 8000, Output: 300, WantStatus: "computed", WantTotalUSD: 0.00138, WantComputedUSD: 0.00138},
	// o3 (price from 2025-06-10): input 2, output 8, reasoning priced as output.
	{Name: "reasoning model", Provider: "openai", Model: "o3", Start: day("2025-09-01T00:00:00Z"),
		Input: 1000, Output: 5000, Reasoning: 4000, WantStatus: "computed", WantTotalUSD: 0.042, WantComputedUSD: 0.042, WantEffective: "2025-06-10"},
	// claude-sonnet-4-5 over 200k input tokens: input 6, output 22.5 for every token.
	{Name: "long-context tier", Provider: "anthropic", Model: "claude-sonnet-4-5", Start: day("2025-11-01T00:00:00Z"),
		Input: 250000, Output: 1000, WantStatus: "computed", WantTotalUSD: 1.5225, WantComputedUSD: 1.5225, WantTier: "input_tokens>200000"},
	// claude-opus-4-6 the day before its 2026-03-13 change: tiered, input 10, output 37.5.
	{Name: "price change, before", Provider: "anthropic", Model: "claude-opus-4-6", Start: day("2026-03-12T23:59:00Z"),
		Input: 250000, Output: 1000, WantStatus: "computed", WantTotalUSD: 2.5375, WantComputedUSD: 2.5375, WantTier: "input_tokens>200000"},
	// claude-opus-4-6 from 2026-03-13: flat, input 5, output 25.
	{Name: "price change, after", Provider: "anthropic", Model: "claude-opus-4-6", Start: day("2026-03-13T00:01:00Z"),
		Input: 250000, Output: 1000, WantStatus: "computed", WantTotalUSD: 1.275, WantComputedUSD: 1.275, WantEffective: "2026-03-13"},
	// A reported cost is kept as the cost of record; the table's figure (gpt-4o, as above) beside it.
	{Name: "provider-reported cost", Provider: "openai", Model: "gpt-4o", Start: day("2025-06-01T12:00:00Z"),
		Input: 1000, Output: 500, ReportedUSD: 0.0091, WantStatus: "provider_reported", WantTotalUSD: 0.0091, WantComputedUSD: 0.0075},
	// Not in the table: flagged, no figure.
	{Name: "unknown model", Provider: "openai", Model: "acme-private-7b", Start: day("2025-06-01T12:00:00Z"),
		Input: 1000, Output: 500, WantStatus: "unpriced"},
}

// TraceID is the hex trace id of the run's spans.
func (r Run) TraceID() string {
	return r.Traces().ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).TraceID().String()
}

// Traces is the run as an OTel GenAI trace: an invoke_agent root and one chat span with
// messages and usage, all ids derived from the run's name.
func (r Run) Traces() ptrace.Traces {
	sum := sha256.Sum256([]byte(r.Name))
	var tid pcommon.TraceID
	copy(tid[:], sum[:16])
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "cost-fixture")
	spans := rs.ScopeSpans().AppendEmpty().Spans()

	root := spans.AppendEmpty()
	root.SetTraceID(tid)
	root.SetSpanID(pcommon.SpanID{sum[16], sum[17], sum[18], sum[19], sum[20], sum[21], sum[22], 1})
	root.SetName("invoke_agent pricer")
	root.SetStartTimestamp(pcommon.NewTimestampFromTime(r.Start))
	root.SetEndTimestamp(pcommon.NewTimestampFromTime(r.Start.Add(2 * time.Second)))
	ra := root.Attributes()
	ra.PutStr("gen_ai.operation.name", "invoke_agent")
	ra.PutStr("gen_ai.agent.name", "pricer")

	chat := spans.AppendEmpty()
	chat.SetTraceID(tid)
	chat.SetSpanID(pcommon.SpanID{sum[16], sum[17], sum[18], sum[19], sum[20], sum[21], sum[22], 2})
	chat.SetParentSpanID(root.SpanID())
	chat.SetKind(ptrace.SpanKindClient)
	chat.SetName("chat " + r.Model)
	chat.SetStartTimestamp(pcommon.NewTimestampFromTime(r.Start.Add(100 * time.Millisecond)))
	chat.SetEndTimestamp(pcommon.NewTimestampFromTime(r.Start.Add(time.Second)))
	a := chat.Attributes()
	a.PutStr("gen_ai.operation.name", "chat")
	a.PutStr("gen_ai.provider.name", r.Provider)
	a.PutStr("gen_ai.request.model", r.Model)
	a.PutStr("gen_ai.response.model", r.Model)
	a.PutStr("gen_ai.input.messages", `[{"role":"user","parts":[{"type":"text","content":"What does this cost?"}]}]`)
	a.PutStr("gen_ai.output.messages", `[{"role":"assistant","parts":[{"type":"text","content":"Let me check."}],"finish_reason":"stop"}]`)
	a.PutInt("gen_ai.usage.input_tokens", r.Input)
	a.PutInt("gen_ai.usage.output_tokens", r.Output)
	if r.CacheRead > 0 {
		a.PutInt("gen_ai.usage.cache_read.input_tokens", r.CacheRead)
	}
	if r.CacheWrite > 0 {
		a.PutInt("gen_ai.usage.cache_write.input_tokens", r.CacheWrite)
	}
	if r.Reasoning > 0 {
		a.PutInt("gen_ai.usage.reasoning.output_tokens", r.Reasoning)
	}
	if r.ReportedUSD > 0 {
		a.PutDouble("gen_ai.usage.cost", r.ReportedUSD)
	}
	return td
}
