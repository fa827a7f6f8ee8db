package pricing

import (
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/reprise-dev/reprise/replaycase"
)

// Anthropic bills a one-hour cache write above a five-minute one; its usage splits
// cache_creation_input_tokens into cache_creation.ephemeral_5m_input_tokens and
// ephemeral_1h_input_tokens. Where the recorded response body says so (OpenInference's
// output.value, the Vercel AI SDK's ai.response.providerMetadata), each part is priced at its own
// price; where it does not, the five-minute price is used and the cost says it was assumed.
//
// claude-sonnet-4-0 (data/genai-prices-0.2.3.json, USD per million): input 3, output 15,
// cache_write_mtok 3.75, cache_write_1h_mtok 6. The call: 10000 input tokens of which 3000
// cache writes (1000 five-minute, 2000 one-hour), 100 output tokens.
func TestOneHourCacheWrites(t *testing.T) {
	const (
		uncachedUSD = 7000 * 3.0 / 1e6
		outputUSD   = 100 * 15.0 / 1e6
		splitUSD    = (1000*3.75 + 2000*6.0) / 1e6 // 0.01575
		fiveMinUSD  = 3000 * 3.75 / 1e6            // 0.01125
	)
	usage := replaycase.Usage{InputTokens: 10000, CacheWriteInputTokens: 3000, OutputTokens: 100}
	const body = `{"type":"message","usage":{"input_tokens":7000,"output_tokens":100,"cache_read_input_tokens":0,` +
		`"cache_creation_input_tokens":3000,"cache_creation":{"ephemeral_5m_input_tokens":1000,"ephemeral_1h_input_tokens":2000}}}`
	td, add := spansWithIDs()
	add(1, func(a pcommon.Map) { a.PutStr("output.value", body) })
	add(2, func(a pcommon.Map) {
		a.PutStr("ai.response.providerMetadata", `{"anthropic":{"usage":{"input_tokens":7000,"output_tokens":100,`+
			`"cache_creation_input_tokens":3000,"cache_creation":{"ephemeral_5m_input_tokens":1000,"ephemeral_1h_input_tokens":2000}},"cacheCreationInputTokens":3000}}`)
	})
	add(3, func(a pcommon.Map) { a.PutInt("gen_ai.usage.cache_creation.input_tokens", 3000) }) // no split recorded
	// A split that is not of the 3000 recorded.
	add(4, func(a pcommon.Map) {
		a.PutStr("output.value", strings.ReplaceAll(body, `"ephemeral_5m_input_tokens":1000`, `"ephemeral_5m_input_tokens":4000`))
	})
	add(5, func(a pcommon.Map) { a.PutStr("output.value", body) }) // a call that wrote nothing to the cache
	id := func(b byte) string { return pcommon.SpanID{b}.String() }
	step := func(b byte, u replaycase.Usage) replaycase.Step {
		return llmStep(id(b), "anthropic", "claude-sonnet-4-0", u)
	}
	c := &replaycase.Case{Steps: []replaycase.Step{step(1, usage), step(2, usage), step(3, usage), step(4, usage),
		step(5, replaycase.Usage{InputTokens: 7000, OutputTokens: 100})}}
	ApplyReported(c, embedded(t), ReadReported(td))

	for i, want := range []struct {
		cacheWriteUSD float64
		detail        string
	}{
		{splitUSD, "2000 of the 3000 cache write tokens were one-hour writes, priced at cache_write_1h_mtok (6 USD per million)"},
		{splitUSD, "2000 of the 3000 cache write tokens were one-hour writes"},
		{fiveMinUSD, "cache writes priced at the five-minute price (cache_write_mtok): the recorded usage does not say how many were one-hour writes, which cost more (cache_write_1h_mtok)"},
		{fiveMinUSD, "cache writes priced at the five-minute price (cache_write_mtok): the recorded split (4000 five-minute + 2000 one-hour) is not of the 3000 cache write tokens recorded"},
	} {
		s := c.Steps[i].Cost
		if s.Status != replaycase.CostComputed || s.CacheWriteUSD == nil || !near(*s.CacheWriteUSD, want.cacheWriteUSD) ||
			!near(*s.TotalUSD, uncachedUSD+outputUSD+want.cacheWriteUSD) || !strings.Contains(s.Detail, want.detail) {
			t.Errorf("step %d: %s cache_write_usd %v total %v detail %q; want cache_write_usd %v and detail %q",
				i+1, s.Status, deref(s.CacheWriteUSD), deref(s.TotalUSD), s.Detail, want.cacheWriteUSD, want.detail)
		}
		// The tokens are counted once: input_usd is of the uncached input only.
		if !near(*s.InputUSD, uncachedUSD) {
			t.Errorf("step %d: input_usd %v, want %v", i+1, *s.InputUSD, uncachedUSD)
		}
	}
	if s := c.Steps[4].Cost; s.Status != replaycase.CostComputed || s.Detail != "" || !near(*s.TotalUSD, uncachedUSD+outputUSD) {
		t.Errorf("no cache writes: %+v", s)
	}
	// A model without a one-hour price gets no note: its cache writes have one price.
	gpt := &replaycase.Case{Steps: []replaycase.Step{llmStep("01", "openai", "gpt-4o", replaycase.Usage{InputTokens: 1000, CacheWriteInputTokens: 100, OutputTokens: 10})}}
	Apply(gpt, embedded(t), nil)
	if s := gpt.Steps[0].Cost; s.Detail != "" {
		t.Errorf("gpt-4o: %+v", s)
	}
}
