package replaycase_test

import (
	"math"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/normalize"
	"github.com/reprise-dev/reprise/replaycase"
)

// structuredAttrs are the attributes decoded with getJSON, with the type each decodes into.
var structuredAttrs = map[string]reflect.Type{
	replaycase.AttrReasons:       reflect.TypeFor[[]replaycase.Reason](),
	"gen_ai.input.messages":      reflect.TypeFor[[]replaycase.Message](),
	"gen_ai.output.messages":     reflect.TypeFor[[]replaycase.Message](),
	"gen_ai.system_instructions": reflect.TypeFor[[]replaycase.Part](),
	"gen_ai.tool.definitions":    reflect.TypeFor[[]replaycase.ToolDefinition](),
	replaycase.AttrToolCalls:     reflect.TypeFor[[]replaycase.ToolCall](),
	replaycase.AttrRetrievalRefs: reflect.TypeFor[[]replaycase.Retrieval](),
	replaycase.AttrRetrievalDocs: reflect.TypeFor[[]replaycase.Document](),
	replaycase.AttrMetadata:      reflect.TypeFor[map[string]string](),
	replaycase.AttrAssertions:    reflect.TypeFor[map[string]string](),
	replaycase.AttrScrubCounts:   reflect.TypeFor[map[string]int64](),
	replaycase.AttrEvaluations:   reflect.TypeFor[[]replaycase.Evaluation](),
	replaycase.AttrCost:          reflect.TypeFor[*replaycase.Cost](),
	replaycase.AttrExceptions:    reflect.TypeFor[[]replaycase.Exception](),
	replaycase.AttrEmbeddings:    reflect.TypeFor[[]replaycase.Embedding](),
}

// sameBothWays decodes attribute key of a into a new value of type t both ways and checks that
// the direct decoding gives what json.Unmarshal of the attribute's JSON gives, error for error.
func sameBothWays(t *testing.T, a pcommon.Map, key string, typ reflect.Type) {
	t.Helper()
	direct, viaJSON := reflect.New(typ), reflect.New(typ)
	dErr, jErr := replaycase.DecodeBothWays(a, key, direct.Interface(), viaJSON.Interface())
	if jErr != nil {
		assert.Error(t, dErr, "%s: the JSON path failed with %v", key, jErr)
		return
	}
	require.NoError(t, dErr, key)
	assert.Equal(t, viaJSON.Elem().Interface(), direct.Elem().Interface(), key)
}

// Every structured attribute of the fixture cases' canonical spans decodes the same both ways.
func TestDirectDecodingMatchesJSONOnFixtureCases(t *testing.T) {
	td := ptrace.NewTraces()
	for _, run := range []string{testfixtures.OTelEvents, testfixtures.Traceloop, testfixtures.OpenInference, testfixtures.OTelNoContent} {
		c, _, _ := normalize.Build(testfixtures.Traces(t, run), testfixtures.Logs(t, run))
		c.Metadata = map[string]string{"team": "search"}
		c.Scrub.Counts = map[string]int64{"email": 2}
		require.NoError(t, replaycase.Encode(c, td))
	}
	seen := 0
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				for key := range sp.Attributes().All() {
					if typ, ok := structuredAttrs[key]; ok {
						sameBothWays(t, sp.Attributes(), key, typ)
						seen++
					}
				}
			}
		}
	}
	assert.Greater(t, seen, 20)
}

// Values another producer could write, which putValue never does, still decode as JSON would:
// other key spellings, unknown keys, other number types, invalid UTF-8, NaN, wrong types.
func TestDirectDecodingLeavesOddValuesToJSON(t *testing.T) {
	a := pcommon.NewMap()
	msgs := a.PutEmptySlice("gen_ai.input.messages")
	m := msgs.AppendEmpty().SetEmptyMap()
	m.PutStr("ROLE", "user") // json matches field names case-insensitively
	m.PutStr("unknown", "ignored")
	parts := m.PutEmptySlice("parts")
	p := parts.AppendEmpty().SetEmptyMap()
	p.PutStr("type", "text")
	p.PutStr("content", "bad \xff byte")
	msgs.AppendEmpty() // null element
	sameBothWays(t, a, "gen_ai.input.messages", structuredAttrs["gen_ai.input.messages"])

	cost := a.PutEmptyMap(replaycase.AttrCost)
	cost.PutStr("status", "priced")
	cost.PutInt("total_usd", 2) // an int where a double is written
	sameBothWays(t, a, replaycase.AttrCost, structuredAttrs[replaycase.AttrCost])

	counts := a.PutEmptyMap(replaycase.AttrScrubCounts)
	counts.PutDouble("email", 3) // a whole double: json reads it as an int
	sameBothWays(t, a, replaycase.AttrScrubCounts, structuredAttrs[replaycase.AttrScrubCounts])

	counts.PutDouble("email", 3.5) // not an integer: an error both ways
	sameBothWays(t, a, replaycase.AttrScrubCounts, structuredAttrs[replaycase.AttrScrubCounts])

	docs := a.PutEmptySlice(replaycase.AttrRetrievalDocs)
	docs.AppendEmpty().SetEmptyMap().PutDouble("score", math.NaN())
	sameBothWays(t, a, replaycase.AttrRetrievalDocs, structuredAttrs[replaycase.AttrRetrievalDocs])

	reasons := a.PutEmptySlice(replaycase.AttrReasons)
	reasons.AppendEmpty().SetEmptyMap().PutStr("Code", "evicted") // another spelling of a field
	reasons.AppendEmpty().SetEmptyMap().PutInt("code", 7)         // the wrong type: an error both ways
	sameBothWays(t, a, replaycase.AttrReasons, structuredAttrs[replaycase.AttrReasons])

	a.PutStr(replaycase.AttrToolCalls, "not a list")
	sameBothWays(t, a, replaycase.AttrToolCalls, structuredAttrs[replaycase.AttrToolCalls])
}

// FuzzDirectDecoding builds attribute values of any shape from the input and checks, for every
// structured attribute type, that the direct decoding agrees with the JSON path.
func FuzzDirectDecoding(f *testing.F) {
	f.Add([]byte{6, 2, 0, 'r', 'o', 'l', 'e', 0, 1, 'u', 5, 0, 1})
	f.Add([]byte{5, 3, 6, 1, 0, 2, 3, 1, 4, 2})
	f.Fuzz(func(t *testing.T, data []byte) {
		a := pcommon.NewMap()
		g := &valueGen{data: data}
		for key := range structuredAttrs {
			g.fill(a.PutEmpty(key), 0)
		}
		for key, typ := range structuredAttrs {
			sameBothWays(t, a, key, typ)
		}
	})
}

// valueGen turns fuzz bytes into pdata values whose keys are mostly field names of the case's
// types, so that the generated values reach deep into them.
type valueGen struct {
	data []byte
	pos  int
}

var genKeys = []string{"role", "parts", "type", "content", "name", "id", "arguments", "code", "detail",
	"status", "total_usd", "unit_prices", "input", "score", "documents", "vector", "text", "Role", "email", ""}

var genStrings = []string{"", "user", "text", "x\xffy", "priced", "a\"b"}

func (g *valueGen) next() int {
	if g.pos >= len(g.data) {
		return 0
	}
	g.pos++
	return int(g.data[g.pos-1])
}

func (g *valueGen) fill(v pcommon.Value, depth int) {
	switch k := g.next() % 8; {
	case k == 0:
		// empty
	case k == 1:
		v.SetStr(genStrings[g.next()%len(genStrings)])
	case k == 2:
		v.SetInt(int64(g.next()) - 128)
	case k == 3:
		v.SetDouble([]float64{0, 1.5, -2, 3, math.NaN(), 1e300}[g.next()%6])
	case k == 4:
		v.SetBool(g.next()%2 == 0)
	case k == 5 && depth < 4:
		s := v.SetEmptySlice()
		for range g.next() % 4 {
			g.fill(s.AppendEmpty(), depth+1)
		}
	case k >= 6 && depth < 4:
		m := v.SetEmptyMap()
		for range g.next() % 5 {
			g.fill(m.PutEmpty(genKeys[g.next()%len(genKeys)]), depth+1)
		}
	}
}

// A cost's figures are decoded into one array (a dozen pointers took an allocation each):
// every figure must still be a variable of its own, holding what the JSON path gives.
func TestDirectDecodingGivesEveryFigureItsOwnVariable(t *testing.T) {
	usd := func(f float64) *float64 { return &f }
	in := &replaycase.Cost{Status: "computed", TotalUSD: usd(1.5), ComputedUSD: usd(1.5), ReportedUSD: usd(1.25),
		InputUSD: usd(0.5), OutputUSD: usd(0.75), CacheReadUSD: usd(0.125), CacheWriteUSD: usd(0.0625),
		ReasoningUSD: usd(0.0625), BudgetUSD: usd(2),
		UnitPrices: &replaycase.UnitPrices{Input: usd(3), Output: usd(15), CacheRead: usd(0.3), CacheWrite: usd(3.75), Reasoning: usd(15)}}
	td := ptrace.NewTraces()
	c := &replaycase.Case{CaseID: "c", Status: replaycase.StatusAccepted, Cost: in,
		Provenance: replaycase.Provenance{TraceID: "0102030405060708090a0b0c0d0e0f10"}}
	require.NoError(t, replaycase.Encode(c, td))
	a := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Attributes()
	var direct, viaJSON *replaycase.Cost
	dErr, jErr := replaycase.DecodeBothWays(a, replaycase.AttrCost, &direct, &viaJSON)
	require.NoError(t, jErr)
	require.NoError(t, dErr)
	require.Equal(t, in, direct)
	require.Equal(t, viaJSON, direct)
	figures := []*float64{direct.TotalUSD, direct.ComputedUSD, direct.ReportedUSD, direct.InputUSD, direct.OutputUSD,
		direct.CacheReadUSD, direct.CacheWriteUSD, direct.ReasoningUSD, direct.BudgetUSD, direct.UnitPrices.Input,
		direct.UnitPrices.Output, direct.UnitPrices.CacheRead, direct.UnitPrices.CacheWrite, direct.UnitPrices.Reasoning}
	seen := map[*float64]int{}
	for i, p := range figures {
		if j, ok := seen[p]; ok {
			t.Fatalf("figures %d and %d are one variable", j, i)
		}
		seen[p] = i
	}
	*direct.TotalUSD = 99
	assert.InDelta(t, 1.5, *direct.ComputedUSD, 0)
}
