package pricing

import (
	"testing"

	"github.com/reprise-dev/reprise/replaycase"
)

// BenchmarkLookupAndCost is the work done per model call of a case: find the model, take the
// price in force, price the usage.
func BenchmarkLookupAndCost(b *testing.B) {
	tbl, err := Embedded()
	if err != nil {
		b.Fatal(err)
	}
	refs := [][]string{{"gpt-4o-mini-2024-07-18", "gpt-4o-mini"}, {"claude-sonnet-4-5-20250929"}, {"acme-private-7b"}}
	providers := []string{"openai", "anthropic", "openai"}
	u := replaycase.Usage{InputTokens: 12000, CacheReadInputTokens: 8000, OutputTokens: 300}
	start := at("2025-06-01T12:00:00Z")
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		k := i % len(refs)
		if q, err := tbl.Lookup(providers[k], refs[k], start); err == nil {
			_ = q.Cost(u)
		}
	}
}

func BenchmarkParseEmbedded(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(embeddedData, EmbeddedVersion); err != nil {
			b.Fatal(err)
		}
	}
}
