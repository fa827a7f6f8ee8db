package pricing

import (
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/replaycase"
)

func llmStep(spanID, provider, model string, u replaycase.Usage) replaycase.Step {
	return replaycase.Step{Kind: replaycase.StepLLM, SpanID: spanID, StartTime: at("2025-06-01T12:00:00Z"),
		ModelConfig: replaycase.ModelConfig{Provider: provider, RequestModel: model}, Usage: u}
}

func TestApplyStepsAndCase(t *testing.T) {
	tbl := embedded(t)
	c := &replaycase.Case{Steps: []replaycase.Step{
		llmStep("01", "openai", "gpt-4o", replaycase.Usage{InputTokens: 1000, OutputTokens: 500}),
		{Kind: replaycase.StepTool, SpanID: "02"},
		llmStep("03", "openai", "gpt-4o", replaycase.Usage{InputTokens: 1000, OutputTokens: 500}),
	}}
	Apply(c, tbl, map[string]float64{"03": 0.01})
	if c.Steps[1].Cost != nil {
		t.Errorf("a tool step got a cost: %+v", c.Steps[1].Cost)
	}
	s0, s2 := c.Steps[0].Cost, c.Steps[2].Cost
	if s0.Status != replaycase.CostComputed || !near(*s0.TotalUSD, 0.0075) || s0.PricingSource != "genai-prices" || s0.PricingVersion != EmbeddedVersion {
		t.Errorf("step 0: %+v", s0)
	}
	// A reported cost is the cost of record; the table's figure stays beside it.
	if s2.Status != replaycase.CostProviderReported || *s2.TotalUSD != 0.01 || *s2.ReportedUSD != 0.01 || !near(*s2.ComputedUSD, 0.0075) {
		t.Errorf("step 2: %+v", s2)
	}
	if c.Cost.Status != replaycase.CostProviderReported || !near(*c.Cost.TotalUSD, 0.0175) || !near(*c.Cost.ComputedUSD, 0.015) || !near(*c.Cost.ReportedUSD, 0.01) {
		t.Errorf("case: %+v", c.Cost)
	}
}

func TestApplyUnpricedAndPartialCase(t *testing.T) {
	tbl := embedded(t)
	c := &replaycase.Case{Steps: []replaycase.Step{
		llmStep("01", "openai", "gpt-4o", replaycase.Usage{InputTokens: 1000, OutputTokens: 500}),
		llmStep("02", "openai", "in-house-model", replaycase.Usage{InputTokens: 1000, OutputTokens: 500}),
		llmStep("03", "openai", "gpt-4o", replaycase.Usage{}),
	}}
	Apply(c, tbl, nil)
	if s := c.Steps[1].Cost; s.Status != replaycase.CostUnpriced || s.TotalUSD != nil || !strings.Contains(s.Detail, "in-house-model") {
		t.Errorf("unknown model: %+v", s)
	}
	if s := c.Steps[2].Cost; s.Status != replaycase.CostUnpriced || s.Detail != "no token usage recorded" {
		t.Errorf("no usage: %+v", s)
	}
	if c.Cost.Status != replaycase.CostPartial || !near(*c.Cost.TotalUSD, 0.0075) {
		t.Errorf("case: %+v", c.Cost)
	}
	only := &replaycase.Case{Steps: []replaycase.Step{c.Steps[1]}}
	Apply(only, tbl, nil)
	if only.Cost.Status != replaycase.CostUnpriced || only.Cost.TotalUSD != nil {
		t.Errorf("all unpriced: %+v", only.Cost)
	}
	none := &replaycase.Case{Steps: []replaycase.Step{{Kind: replaycase.StepTool}}}
	Apply(none, tbl, nil)
	if none.Cost != nil {
		t.Errorf("a case without model calls got a cost: %+v", none.Cost)
	}
}

func TestReportedCosts(t *testing.T) {
	td, add := spansWithIDs()
	add(1, func(a pcommon.Map) { a.PutDouble("gen_ai.usage.cost", 0.25) })
	add(2, func(a pcommon.Map) { a.PutStr("llm.cost.total", "0.5") })
	add(3, func(a pcommon.Map) {
		a.PutStr("output.value", `{"id":"gen-1","usage":{"prompt_tokens":10,"cost":0.0012}}`)
	})
	add(4, func(a pcommon.Map) { a.PutDouble("gen_ai.usage.cost", -1) })
	add(5, func(a pcommon.Map) { a.PutStr("output.value", `not json`) })
	got := ReportedCosts(td)
	want := map[string]float64{"0100000000000000": 0.25, "0200000000000000": 0.5, "0300000000000000": 0.0012}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: got %v, want %v", k, got[k], v)
		}
	}
}

// A reported cost that is no cost (text, negative) is not used, a later attribute is still
// tried, and the step's cost says which value was set aside instead of showing the computed
// figure as if nothing had been reported.
func TestRejectedReportedCostsAreNamed(t *testing.T) {
	td, add := spansWithIDs()
	add(1, func(a pcommon.Map) { a.PutStr("gen_ai.usage.cost", "n/a"); a.PutDouble("llm.cost.total", 0.5) })
	add(3, func(a pcommon.Map) { a.PutDouble("gen_ai.usage.cost", -1) })
	r := ReadReported(td)
	one, three := pcommon.SpanID{1}.String(), pcommon.SpanID{3}.String()
	if r.USD[one] != 0.5 {
		t.Errorf("the valid attribute after a rejected one is used: %v", r.USD)
	}
	if _, ok := r.USD[three]; ok {
		t.Errorf("a negative cost is used: %v", r.USD)
	}
	if !strings.Contains(r.Rejected[one], `gen_ai.usage.cost = "n/a"`) || !strings.Contains(r.Rejected[three], `gen_ai.usage.cost = "-1"`) {
		t.Errorf("rejected: %v", r.Rejected)
	}

	c := &replaycase.Case{Steps: []replaycase.Step{
		llmStep(one, "openai", "gpt-4o", replaycase.Usage{InputTokens: 1000, OutputTokens: 500}),
		llmStep(three, "openai", "gpt-4o", replaycase.Usage{InputTokens: 1000, OutputTokens: 500}),
	}}
	ApplyReported(c, embedded(t), r)
	if s := c.Steps[0].Cost; s.Status != replaycase.CostProviderReported || !strings.Contains(s.Detail, `gen_ai.usage.cost = "n/a"`) {
		t.Errorf("step 0: %+v", s)
	}
	if s := c.Steps[1].Cost; s.Status != replaycase.CostComputed || !strings.Contains(s.Detail, "reported cost not used") {
		t.Errorf("step 1: %+v", s)
	}
}

// spansWithIDs is an empty trace and a function that adds a span with the given id, its
// attributes set by set.
func spansWithIDs() (ptrace.Traces, func(id byte, set func(pcommon.Map))) {
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	return td, func(id byte, set func(pcommon.Map)) {
		sp := spans.AppendEmpty()
		sp.SetSpanID(pcommon.SpanID{id})
		set(sp.Attributes())
	}
}

// A call that recorded only total_tokens cannot be priced (input and output prices differ), and
// its detail says that a count was there.
func TestOnlyTotalTokensIsUnpriced(t *testing.T) {
	c := &replaycase.Case{Steps: []replaycase.Step{
		llmStep("01", "openai", "gpt-4o", replaycase.Usage{TotalTokens: 1500}),
	}}
	Apply(c, embedded(t), nil)
	if s := c.Steps[0].Cost; s.Status != replaycase.CostUnpriced || s.TotalUSD != nil || !strings.Contains(s.Detail, "only total_tokens (1500)") {
		t.Errorf("only total_tokens: %+v", s)
	}
}

// OpenLIT writes gen_ai.usage.cost = 0 for a model it has no price for (its
// get_chat_model_cost returns 0 on any error): a reported 0 for a call that used tokens is no
// cost of record: the step is priced from the table (or unpriced), and the detail says why the
// 0 was not used.
func TestReportedZeroForTokensIsNotTheCost(t *testing.T) {
	c := &replaycase.Case{Steps: []replaycase.Step{
		llmStep("01", "openai", "gpt-4o", replaycase.Usage{InputTokens: 1000, OutputTokens: 500}),
		llmStep("02", "openai", "in-house-model", replaycase.Usage{InputTokens: 1000, OutputTokens: 500}),
	}}
	Apply(c, embedded(t), map[string]float64{"01": 0, "02": 0})
	s0, s1 := c.Steps[0].Cost, c.Steps[1].Cost
	if s0.Status != replaycase.CostComputed || !near(*s0.TotalUSD, 0.0075) || s0.ReportedUSD != nil || !strings.Contains(s0.Detail, "reported cost 0 not used") {
		t.Errorf("step 0: %+v", s0)
	}
	if s1.Status != replaycase.CostUnpriced || s1.TotalUSD != nil || !strings.Contains(s1.Detail, "reported cost 0 not used") {
		t.Errorf("step 1: %+v", s1)
	}
	if c.Cost.Status != replaycase.CostPartial || !near(*c.Cost.TotalUSD, 0.0075) {
		t.Errorf("case: %+v", c.Cost)
	}
}
