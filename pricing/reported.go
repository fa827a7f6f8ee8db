package pricing

import (
	"encoding/json"
	"fmt"
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

// Reported is what the spans of a run reported about their calls' costs, by span id (hex).
type Reported struct {
	// USD is the cost in USD a span reports for its call: one of reportedCostAttrs, else an
	// OpenRouter-style usage.cost in the response body recorded as output.value.
	USD map[string]float64
	// Rejected says which reported costs were not a finite non-negative number, and what they
	// were: they are not used, and the step's cost says so.
	Rejected map[string]string
	// CacheWrites is how a span's recorded usage splits its cache writes into five-minute and
	// one-hour ones (which have different prices), for the spans whose usage says.
	CacheWrites map[string]CacheWrites
}

// ReadReported reads the costs the spans of td report.
func ReadReported(td ptrace.Traces) Reported {
	r := Reported{USD: map[string]float64{}}
	for s := range pdatawalk.Spans(td) {
		usd, ok, rejected := reportedCost(s.Span.Attributes())
		id := s.Span.SpanID().String()
		if ok {
			r.USD[id] = usd
		}
		if w, ok := cacheWrites(s.Span.Attributes()); ok {
			if r.CacheWrites == nil {
				r.CacheWrites = map[string]CacheWrites{}
			}
			r.CacheWrites[id] = w
		}
		if rejected != "" {
			if r.Rejected == nil {
				r.Rejected = map[string]string{}
			}
			r.Rejected[id] = rejected
		}
	}
	return r
}

// ReportedCosts is ReadReported's USD.
func ReportedCosts(td ptrace.Traces) map[string]float64 { return ReadReported(td).USD }

// reportedCost is the first valid cost of a span's reportedCostAttrs, else of its recorded
// response body; rejected names the ones present that were no valid cost (a later one is
// still tried).
func reportedCost(a pcommon.Map) (usd float64, ok bool, rejected string) {
	var bad []string
	for _, key := range reportedCostAttrs {
		if v, found := a.Get(key); found {
			if usd, ok = number(v); ok {
				return usd, true, strings.Join(bad, "; ")
			}
			bad = append(bad, fmt.Sprintf("%s = %s", key, shown(v.AsString())))
		}
	}
	if cost, found := bodyCost(a); found {
		if usd, ok = valid(strconv.ParseFloat(cost, 64)); !ok {
			bad = append(bad, "output.value usage.cost = "+shown(cost))
		}
	}
	return usd, ok, strings.Join(bad, "; ")
}

// bodyCost is the usage.cost an OpenRouter-style response body recorded as output.value holds,
// as written.
func bodyCost(a pcommon.Map) (string, bool) {
	body, found := a.Get("output.value")
	// Most response bodies report no cost: look before parsing the whole body.
	if !found || body.Type() != pcommon.ValueTypeStr || !strings.Contains(body.Str(), `"cost"`) {
		return "", false
	}
	var resp struct {
		Usage struct {
			Cost *json.Number `json:"cost"`
		} `json:"usage"`
	}
	if json.Unmarshal([]byte(body.Str()), &resp) != nil || resp.Usage.Cost == nil {
		return "", false
	}
	return resp.Usage.Cost.String(), true
}

// shown quotes a rejected value, cut to 40 bytes.
func shown(v string) string {
	if len(v) > 40 {
		v = v[:40] + "…"
	}
	return strconv.Quote(v)
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
