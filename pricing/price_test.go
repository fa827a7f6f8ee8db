package pricing

import (
	"encoding/json"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reprise-dev/reprise/replaycase"
)

func embedded(t *testing.T) *Table {
	t.Helper()
	tbl, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

func at(s string) time.Time {
	ts, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return ts
}

// Hand-checked figures: each want value is worked out from the unit prices in the comment
// (USD per million tokens, from data/genai-prices-0.2.3.json), not from the code under test.
func TestCostHandChecked(t *testing.T) {
	tbl := embedded(t)
	cases := []struct {
		name, provider, model, start string
		usage                        replaycase.Usage
		want                         replaycase.Cost
	}{{
		// gpt-4o: input 2.5, output 10. 1000×2.5/1e6 + 500×10/1e6.
		name: "plain chat", provider: "openai", model: "gpt-4o", start: "2025-06-01T12:00:00Z",
		usage: replaycase.Usage{InputTokens: 1000, OutputTokens: 500},
		want: replaycase.Cost{Status: replaycase.CostComputed, TotalUSD: p(0.0075), InputUSD: p(0.0025), OutputUSD: p(0.005),
			CacheReadUSD: p(0), CacheWriteUSD: p(0), ReasoningUSD: p(0), ProviderID: "openai", ModelID: "gpt-4o"},
	}, {
		// gpt-4o-mini: input 0.15, cache read 0.075, output 0.6. 4000 uncached + 8000 cached.
		name: "cached input", provider: "openai", model: "gpt-4o-mini", start: "2025-06-01T12:00:00Z",
		usage: replaycase.Usage{InputTokens: 12000, CacheReadInputTokens: 8000, OutputTokens: 300},
		want: replaycase.Cost{Status: replaycase.CostComputed, TotalUSD: p(0.00138), InputUSD: p(0.0006), CacheReadUSD: p(0.0006),
			OutputUSD: p(0.00018), CacheWriteUSD: p(0), ReasoningUSD: p(0), ProviderID: "openai", ModelID: "gpt-4o-mini"},
	}, {
		// claude-sonnet-4-5 (Anthropic's input_tokens plus cache, as the normalizer records it):
		// input 3, cache write 3.75, cache read 0.3, output 15. 200 uncached.
		name: "cache read and write", provider: "anthropic", model: "claude-sonnet-4-5-20250929", start: "2025-11-01T00:00:00Z",
		usage: replaycase.Usage{InputTokens: 2000, CacheReadInputTokens: 1500, CacheWriteInputTokens: 300, OutputTokens: 800},
		want: replaycase.Cost{Status: replaycase.CostComputed, TotalUSD: p(0.014175), InputUSD: p(0.0006), CacheReadUSD: p(0.00045),
			CacheWriteUSD: p(0.001125), OutputUSD: p(0.012), ReasoningUSD: p(0), ProviderID: "anthropic", ModelID: "claude-sonnet-4-5"},
	}, {
		// o3: input 2, output 8; reasoning has no price of its own, so it is priced as output.
		name: "reasoning model", provider: "openai", model: "o3", start: "2025-09-01T00:00:00Z",
		usage: replaycase.Usage{InputTokens: 1000, OutputTokens: 5000, ReasoningOutputTokens: 4000},
		want: replaycase.Cost{Status: replaycase.CostComputed, TotalUSD: p(0.042), InputUSD: p(0.002), OutputUSD: p(0.008),
			ReasoningUSD: p(0.032), CacheReadUSD: p(0), CacheWriteUSD: p(0), ProviderID: "openai", ModelID: "o3",
			EffectiveDate: "2025-06-10"}, // o3's price was cut on 2025-06-10
	}, {
		// claude-sonnet-4-5 above 200k input tokens: every token at the tier, input 6, output 22.5.
		name: "long-context tier", provider: "anthropic", model: "claude-sonnet-4-5", start: "2025-11-01T00:00:00Z",
		usage: replaycase.Usage{InputTokens: 250000, OutputTokens: 1000},
		want: replaycase.Cost{Status: replaycase.CostComputed, TotalUSD: p(1.5225), InputUSD: p(1.5), OutputUSD: p(0.0225),
			CacheReadUSD: p(0), CacheWriteUSD: p(0), ReasoningUSD: p(0), Tier: "input_tokens>200000",
			ProviderID: "anthropic", ModelID: "claude-sonnet-4-5"},
	}, {
		// claude-opus-4-6 before its 2026-03-13 change: tiered, 10 input / 37.5 output above 200k.
		name: "price change, day before", provider: "anthropic", model: "claude-opus-4-6", start: "2026-03-12T23:59:59Z",
		usage: replaycase.Usage{InputTokens: 250000, OutputTokens: 1000},
		want: replaycase.Cost{Status: replaycase.CostComputed, TotalUSD: p(2.5375), InputUSD: p(2.5), OutputUSD: p(0.0375),
			CacheReadUSD: p(0), CacheWriteUSD: p(0), ReasoningUSD: p(0), Tier: "input_tokens>200000",
			ProviderID: "anthropic", ModelID: "claude-opus-4-6"},
	}, {
		// claude-opus-4-6 from 2026-03-13 (UTC): flat 5 input / 25 output.
		name: "price change, from the date", provider: "anthropic", model: "claude-opus-4-6", start: "2026-03-13T00:00:00Z",
		usage: replaycase.Usage{InputTokens: 250000, OutputTokens: 1000},
		want: replaycase.Cost{Status: replaycase.CostComputed, TotalUSD: p(1.275), InputUSD: p(1.25), OutputUSD: p(0.025),
			CacheReadUSD: p(0), CacheWriteUSD: p(0), ReasoningUSD: p(0), EffectiveDate: "2026-03-13",
			ProviderID: "anthropic", ModelID: "claude-opus-4-6"},
	}, {
		name: "provider from the model", provider: "", model: "gpt-4o", start: "2025-06-01T12:00:00Z",
		usage: replaycase.Usage{InputTokens: 1000, OutputTokens: 500},
		want: replaycase.Cost{Status: replaycase.CostComputed, TotalUSD: p(0.0075), InputUSD: p(0.0025), OutputUSD: p(0.005),
			CacheReadUSD: p(0), CacheWriteUSD: p(0), ReasoningUSD: p(0), ProviderID: "openai", ModelID: "gpt-4o"},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			q, err := tbl.Lookup(tc.provider, []string{tc.model}, at(tc.start))
			if err != nil {
				t.Fatal(err)
			}
			got := q.Cost(tc.usage)
			got.UnitPrices = nil
			assertCost(t, got, tc.want)
		})
	}
}

func TestUnknownModelIsNotGuessed(t *testing.T) {
	tbl := embedded(t)
	for _, tc := range []struct{ provider, model string }{
		{"openai", "my-fine-tune-v3"},
		{"acme-llm-cloud", "gpt-4o"}, // a provider the table does not know is not replaced by another
		{"", "totally-unknown-model"},
	} {
		if q, err := tbl.Lookup(tc.provider, []string{tc.model}, at("2025-06-01T00:00:00Z")); err == nil {
			t.Errorf("%s/%s matched %s/%s; want unpriced", tc.provider, tc.model, q.ProviderID, q.ModelID)
		}
	}
}

// The package's own figures (pricing/testdata/genai-prices-examples.json, written by
// data/snapshot.py with genai_prices.calc_price) must come out the same here.
func TestMatchesGenAIPricesExamples(t *testing.T) {
	raw, err := os.ReadFile("testdata/genai-prices-examples.json")
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Version  string `json:"genai_prices_version"`
		Examples []struct {
			Provider, Model string
			Usage           map[string]int64
			StartTime       string `json:"start_time"`
			MatchedProvider string `json:"matched_provider"`
			MatchedModel    string `json:"matched_model"`
			InputUSD        string `json:"input_usd"`
			OutputUSD       string `json:"output_usd"`
			TotalUSD        string `json:"total_usd"`
		}
	}
	if err := json.Unmarshal(raw, &file); err != nil {
		t.Fatal(err)
	}
	if file.Version != EmbeddedVersion {
		t.Fatalf("examples are from genai-prices %s, the table from %s", file.Version, EmbeddedVersion)
	}
	tbl := embedded(t)
	for _, ex := range file.Examples {
		u := replaycase.Usage{InputTokens: ex.Usage["input_tokens"], OutputTokens: ex.Usage["output_tokens"],
			CacheReadInputTokens: ex.Usage["cache_read_tokens"], CacheWriteInputTokens: ex.Usage["cache_write_tokens"],
			ReasoningOutputTokens: ex.Usage["output_reasoning_tokens"]}
		q, err := tbl.Lookup(ex.Provider, []string{ex.Model}, at(ex.StartTime))
		if err != nil {
			t.Errorf("%s/%s: %v", ex.Provider, ex.Model, err)
			continue
		}
		c := q.Cost(u)
		if q.ProviderID != ex.MatchedProvider || q.ModelID != ex.MatchedModel {
			t.Errorf("%s/%s matched %s/%s, genai-prices %s/%s", ex.Provider, ex.Model, q.ProviderID, q.ModelID, ex.MatchedProvider, ex.MatchedModel)
		}
		input := *c.InputUSD + *c.CacheReadUSD + *c.CacheWriteUSD
		output := *c.OutputUSD + *c.ReasoningUSD
		for _, chk := range []struct {
			what string
			got  float64
			want string
		}{{"input", input, ex.InputUSD}, {"output", output, ex.OutputUSD}, {"total", *c.TotalUSD, ex.TotalUSD}} {
			if !near(chk.got, mustFloat(t, chk.want)) {
				t.Errorf("%s/%s at %s: %s %v, genai-prices %s", ex.Provider, ex.Model, ex.StartTime, chk.what, chk.got, chk.want)
			}
		}
	}
}

func TestPartialWhenAKindHasNoPrice(t *testing.T) {
	tbl, err := Parse([]byte(`[{"id":"emb","name":"E","api_pattern":"x","models":[
		{"id":"embed-1","match":{"equals":"embed-1"},"prices":{"input_mtok":0.1}}]}]`), "test")
	if err != nil {
		t.Fatal(err)
	}
	q, err := tbl.Lookup("emb", []string{"embed-1"}, at("2025-01-01T00:00:00Z"))
	if err != nil {
		t.Fatal(err)
	}
	c := q.Cost(replaycase.Usage{InputTokens: 1000, OutputTokens: 10})
	if c.Status != replaycase.CostPartial || !near(*c.TotalUSD, 0.0001) || c.Detail != "no price for output_mtok" {
		t.Fatalf("got %+v", c)
	}
}

// TestLinesListEveryPriceByKey: a quote's prices come out sorted by key with their tiers, and a
// key whose price is null has none, for display and for pricing.
func TestLinesListEveryPriceByKey(t *testing.T) {
	tbl, err := Parse([]byte(`[{"id":"p","name":"P","api_pattern":"x","models":[
		{"id":"m","match":{"equals":"m"},"prices":{"output_mtok":15,"cache_read_mtok":null,
			"input_mtok":{"base":3,"tiers":[{"start":200000,"price":6}]},"cache_write_mtok":3.75}}]}]`), "test")
	if err != nil {
		t.Fatal(err)
	}
	q, err := tbl.Lookup("p", []string{"m"}, at("2025-01-01T00:00:00Z"))
	if err != nil {
		t.Fatal(err)
	}
	want := []PriceLine{
		{Key: "cache_write_mtok", Base: 3.75},
		{Key: "input_mtok", Base: 3, Tiers: []TierLine{{Start: 200000, Price: 6}}},
		{Key: "output_mtok", Base: 15},
	}
	if got := q.Lines(); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	// Cache reads, whose own price is null, are priced as input, at the tier the call reached.
	c := q.Cost(replaycase.Usage{InputTokens: 300000, CacheReadInputTokens: 1000, OutputTokens: 10})
	if c.Status != replaycase.CostComputed || *c.UnitPrices.CacheRead != 6 || *c.UnitPrices.CacheWrite != 3.75 || c.Tier != "input_tokens>200000" {
		t.Fatalf("got %+v", c)
	}
}

func TestInconsistentUsageIsUnpriced(t *testing.T) {
	q, err := embedded(t).Lookup("openai", []string{"gpt-4o"}, at("2025-06-01T00:00:00Z"))
	if err != nil {
		t.Fatal(err)
	}
	// Anthropic's own input_tokens exclude the cache; a count recorded that way is not guessed at.
	c := q.Cost(replaycase.Usage{InputTokens: 10, CacheReadInputTokens: 500, OutputTokens: 5})
	if c.Status != replaycase.CostUnpriced || c.TotalUSD != nil {
		t.Fatalf("got %+v", c)
	}
}

func TestTimeOfDayConstraint(t *testing.T) {
	tbl, err := Parse([]byte(`[{"id":"ds","name":"D","api_pattern":"x","models":[
		{"id":"m","match":{"equals":"m"},"prices":[
			{"prices":{"input_mtok":1,"output_mtok":2}},
			{"constraint":{"start_time":"16:30:00Z","end_time":"00:30:00Z"},"prices":{"input_mtok":0.5,"output_mtok":1}}]}]}]`), "test")
	if err != nil {
		t.Fatal(err)
	}
	for ts, want := range map[string]float64{"2025-01-01T12:00:00Z": 1, "2025-01-01T17:00:00Z": 0.5, "2025-01-02T00:10:00Z": 0.5, "2025-01-02T00:30:00Z": 1} {
		q, err := tbl.Lookup("ds", []string{"m"}, at(ts))
		if err != nil {
			t.Fatal(err)
		}
		if c := q.Cost(replaycase.Usage{InputTokens: 1_000_000}); !near(*c.TotalUSD, want) {
			t.Errorf("%s: %v, want %v", ts, *c.TotalUSD, want)
		}
	}
}

func TestCompactDatedModelRef(t *testing.T) {
	q, err := embedded(t).Lookup("anthropic", []string{"claude-sonnet-4-5-20250929"}, at("2025-11-01T00:00:00Z"))
	if err != nil || q.ModelID != "claude-sonnet-4-5" {
		t.Fatalf("%v %+v", err, q)
	}
}

func p(f float64) *float64 { return &f }

func near(a, b float64) bool {
	d := a - b
	if d < 0 {
		d = -d
	}
	return d <= 1e-12*(1+b)
}

func mustFloat(t *testing.T, s string) float64 {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func assertCost(t *testing.T, got, want replaycase.Cost) {
	t.Helper()
	for _, f := range []struct {
		name      string
		got, want *float64
	}{{"total", got.TotalUSD, want.TotalUSD}, {"input", got.InputUSD, want.InputUSD}, {"output", got.OutputUSD, want.OutputUSD},
		{"cache_read", got.CacheReadUSD, want.CacheReadUSD}, {"cache_write", got.CacheWriteUSD, want.CacheWriteUSD},
		{"reasoning", got.ReasoningUSD, want.ReasoningUSD}} {
		if (f.got == nil) != (f.want == nil) || (f.got != nil && !near(*f.got, *f.want)) {
			t.Errorf("%s: got %v, want %v", f.name, deref(f.got), deref(f.want))
		}
	}
	if got.Status != want.Status || got.Tier != want.Tier || got.EffectiveDate != want.EffectiveDate ||
		got.ProviderID != want.ProviderID || got.ModelID != want.ModelID {
		t.Errorf("got %s tier=%q eff=%q %s/%s, want %s tier=%q eff=%q %s/%s", got.Status, got.Tier, got.EffectiveDate, got.ProviderID, got.ModelID,
			want.Status, want.Tier, want.EffectiveDate, want.ProviderID, want.ModelID)
	}
}

func deref(f *float64) any {
	if f == nil {
		return nil
	}
	return *f
}

// Any token counts priced with a real model entry give non-negative parts that add up to the
// figure, or no figure at all when the counts contradict each other.
func FuzzCostParts(f *testing.F) {
	f.Add(int64(1000), int64(500), int64(0), int64(0), int64(0), int64(0))
	f.Add(int64(250000), int64(1000), int64(1500), int64(300), int64(200), int64(1))
	f.Add(int64(10), int64(5), int64(500), int64(0), int64(0), int64(2))
	tbl, err := Embedded()
	if err != nil {
		f.Fatal(err)
	}
	models := []string{"gpt-4o", "claude-sonnet-4-5", "claude-opus-4-6", "o3"}
	f.Fuzz(func(t *testing.T, in, out, cr, cw, reasoning, pick int64) {
		const bound = 1 << 40 // far above any real call
		for _, v := range []int64{in, out, cr, cw, reasoning} {
			if v < 0 || v > bound {
				t.Skip()
			}
		}
		model := models[int(uint64(pick)%uint64(len(models)))]
		provider := "openai"
		if model[0] == 'c' {
			provider = "anthropic"
		}
		q, err := tbl.Lookup(provider, []string{model}, at("2026-06-01T00:00:00Z"))
		if err != nil {
			t.Fatal(err)
		}
		c := q.Cost(replaycase.Usage{InputTokens: in, OutputTokens: out, CacheReadInputTokens: cr, CacheWriteInputTokens: cw, ReasoningOutputTokens: reasoning})
		if in < cr+cw || out < reasoning {
			if c.Status != replaycase.CostUnpriced || c.TotalUSD != nil {
				t.Fatalf("inconsistent usage got a figure: %+v", c)
			}
			return
		}
		if c.Status != replaycase.CostComputed {
			t.Fatalf("status %s: %s", c.Status, c.Detail)
		}
		sum := 0.0
		for _, part := range []*float64{c.InputUSD, c.OutputUSD, c.CacheReadUSD, c.CacheWriteUSD, c.ReasoningUSD} {
			if part == nil || *part < 0 {
				t.Fatalf("part missing or negative: %+v", c)
			}
			sum += *part
		}
		if d := sum - *c.TotalUSD; d > 1e-9**c.TotalUSD+1e-12 || d < -1e-9**c.TotalUSD-1e-12 {
			t.Fatalf("parts %v do not add up to %v", sum, *c.TotalUSD)
		}
	})
}

// The semantic conventions' provider names reach the provider that prices them.
func TestSemconvProviderNames(t *testing.T) {
	tbl := embedded(t)
	for _, tc := range []struct{ provider, model, wantProvider string }{
		{"azure.ai.openai", "gpt-4o", "azure"},
		{"x_ai", "grok-3", "x-ai"},
		{"gcp.vertex_ai", "gemini-2.5-pro", "google"},
		{"gcp.gemini", "gemini-2.5-pro", "google"},
		{"aws.bedrock", "amazon.nova-pro-v1:0", "aws"},
		{"mistral_ai", "mistral-large-latest", "mistral"},
	} {
		q, err := tbl.Lookup(tc.provider, []string{tc.model}, at("2025-09-01T00:00:00Z"))
		if err != nil {
			t.Errorf("%s/%s: %v", tc.provider, tc.model, err)
			continue
		}
		if q.ProviderID != tc.wantProvider {
			t.Errorf("%s/%s matched provider %s, want %s", tc.provider, tc.model, q.ProviderID, tc.wantProvider)
		}
	}
}

// TestEveryFigureOfACostIsItsOwn: the figures of a Cost share one allocation, so this checks
// that no two of them are the same variable (a caller that changes one, as Apply replaces the
// total with a reported cost, must not change another) and that each holds its own figure.
func TestEveryFigureOfACostIsItsOwn(t *testing.T) {
	tbl, err := Parse([]byte(`[{"id":"p","name":"P","api_pattern":"x","models":[
		{"id":"m","match":{"equals":"m"},"prices":{"input_mtok":1,"output_mtok":2,
			"cache_read_mtok":3,"cache_write_mtok":4,"output_reasoning_mtok":5}}]}]`), "test")
	if err != nil {
		t.Fatal(err)
	}
	q, err := tbl.Lookup("p", []string{"m"}, at("2025-01-01T00:00:00Z"))
	if err != nil {
		t.Fatal(err)
	}
	c := q.Cost(replaycase.Usage{InputTokens: 10e6, CacheReadInputTokens: 2e6, CacheWriteInputTokens: 1e6,
		OutputTokens: 4e6, ReasoningOutputTokens: 3e6})
	u := c.UnitPrices
	figures := []struct {
		name string
		p    *float64
		want float64
	}{
		{"input_usd", c.InputUSD, 7}, {"output_usd", c.OutputUSD, 2}, {"cache_read_usd", c.CacheReadUSD, 6},
		{"cache_write_usd", c.CacheWriteUSD, 4}, {"reasoning_usd", c.ReasoningUSD, 15},
		{"computed_usd", c.ComputedUSD, 34}, {"total_usd", c.TotalUSD, 34},
		{"unit input", u.Input, 1}, {"unit output", u.Output, 2}, {"unit cache_read", u.CacheRead, 3},
		{"unit cache_write", u.CacheWrite, 4}, {"unit reasoning", u.Reasoning, 5},
	}
	seen := map[*float64]string{}
	for _, f := range figures {
		if f.p == nil || !near(*f.p, f.want) {
			t.Fatalf("%s: got %v, want %v (cost %+v)", f.name, f.p, f.want, c)
		}
		if other, ok := seen[f.p]; ok {
			t.Fatalf("%s and %s are the same variable", f.name, other)
		}
		seen[f.p] = f.name
	}
	*c.TotalUSD = 1
	if *c.ComputedUSD != 34 {
		t.Fatalf("changing the total changed the computed cost to %v", *c.ComputedUSD)
	}
}

// Model names are matched without regard to case, also when no provider was recorded and the
// model has to name it: the data's model_match regexes (openai's ^o[134], mistral's) are
// written in lower case.
func TestProviderFromModelIgnoresCase(t *testing.T) {
	tbl := embedded(t)
	for _, ref := range []string{"O3-mini", "Mistral-Large-Latest"} {
		if _, err := tbl.Lookup("", []string{ref}, at("2025-09-01T00:00:00Z")); err != nil {
			t.Errorf("%s: %v", ref, err)
		}
	}
}

// Tokens that total_tokens counts but neither input nor output does (Gemini's thoughts when
// recorded outside output_tokens, Bedrock Converse's cache tokens outside inputTokens) have no
// kind and so no price: the figure covers the rest and says so, it is not a full price.
func TestTokensOnlyInTotalMakeThePricePartial(t *testing.T) {
	q, err := embedded(t).Lookup("openai", []string{"gpt-4o"}, at("2025-06-01T00:00:00Z"))
	if err != nil {
		t.Fatal(err)
	}
	c := q.Cost(replaycase.Usage{InputTokens: 1000, OutputTokens: 500, TotalTokens: 1800})
	if c.Status != replaycase.CostPartial || c.TotalUSD == nil || !near(*c.TotalUSD, 0.0075) || !strings.Contains(c.Detail, "300 tokens") {
		t.Errorf("total above input + output: %+v", c)
	}
	if c := q.Cost(replaycase.Usage{InputTokens: 1000, OutputTokens: 500, TotalTokens: 1500}); c.Status != replaycase.CostComputed {
		t.Errorf("total = input + output: %+v", c)
	}
}
