package pricing

import (
	"encoding/json"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/internal/pdatawalk"
)

// reportedCostAttrs are the span attributes that carry a cost in USD reported by a provider or
// an instrumentation, first present wins: OpenLIT's gen_ai.usage.cost and OpenInference's
// llm.cost.total.
var reportedCostAttrs = []string{"gen_ai.usage.cost", "llm.cost.total"}

// ReportedCosts returns, by span id (hex), the cost in USD that a span reports for its call:
// one of reportedCostAttrs, else an OpenRouter-style usage.cost in the response body recorded as
// output.value. A value that is not a finite non-negative number is ignored.
func ReportedCosts(td ptrace.Traces) map[string]float64 {
	out := map[string]float64{}
	for s := range pdatawalk.Spans(td) {
		if usd, ok := reportedCost(s.Span.Attributes()); ok {
			out[s.Span.SpanID().String()] = usd
		}
	}
	return out
}

func reportedCost(a pcommon.Map) (float64, bool) {
	for _, key := range reportedCostAttrs {
		if v, ok := a.Get(key); ok {
			return number(v)
		}
	}
	body, ok := a.Get("output.value")
	// Most response bodies report no cost: look before parsing the whole body.
	if !ok || body.Type() != pcommon.ValueTypeStr || !strings.Contains(body.Str(), `"cost"`) {
		return 0, false
	}
	var resp struct {
		Usage struct {
			Cost *json.Number `json:"cost"`
		} `json:"usage"`
	}
	if json.Unmarshal([]byte(body.Str()), &resp) != nil || resp.Usage.Cost == nil {
		return 0, false
	}
	return valid(strconv.ParseFloat(resp.Usage.Cost.String(), 64))
}

func number(v pcommon.Value) (float64, bool) {
	switch v.Type() {
	case pcommon.ValueTypeDouble:
		return valid(v.Double(), nil)
	case pcommon.ValueTypeInt:
		return valid(float64(v.Int()), nil)
	case pcommon.ValueTypeStr:
		return valid(strconv.ParseFloat(v.Str(), 64))
	}
	return 0, false
}

func valid(f float64, err error) (float64, bool) {
	if err != nil || f < 0 || f != f || f > 1e15 {
		return 0, false
	}
	return f, true
}
