package pricing

import (
	"strings"
	"testing"

	"github.com/reprise-dev/reprise/replaycase"
)

// A model recorded as <provider>/<model> is priced as <model> when the prefix names the step's
// own provider (or is Gemini's models/ resource prefix), and the cost says which name was priced.
// A prefix naming another provider is never stripped: behind a router or Azure, openai/… is that
// provider's model, priced at its price or not at all.
func TestProviderPrefixedModel(t *testing.T) {
	tbl := embedded(t)
	u := replaycase.Usage{InputTokens: 1000, OutputTokens: 500}
	cases := []struct {
		provider, model string
		wantModel       string // the table's model id; "" for unpriced
		wantDetail      string // what the detail must say
	}{
		{"openai", "openai/gpt-4o", "gpt-4o", `priced as "gpt-4o"`},
		{"anthropic", "anthropic/claude-sonnet-4-5", "claude-sonnet-4-5", `priced as "claude-sonnet-4-5"`},
		{"gcp.gemini", "models/gemini-2.5-pro", "gemini-2.5-pro", `priced as "gemini-2.5-pro"`},
		{"gcp.vertex_ai", "google/gemini-2.5-pro", "gemini-2.5-pro", `priced as "gemini-2.5-pro"`},
		{"x_ai", "x-ai/grok-4", "grok-4-0709", `priced as "grok-4"`}, // grok-4 is the table's grok-4-0709
		// The table prices the router's own openai/gpt-4o: that entry, as recorded.
		{"openrouter", "openai/gpt-4o", "openai/gpt-4o", ""},
		// Bedrock ids are in the table as they are: nothing is stripped from them.
		{"aws.bedrock", "anthropic.claude-3-5-sonnet-20240620-v1:0", "regional.anthropic.claude-3-5-sonnet-20240620-v1:0", ""},
		// Another provider's prefix: not this provider's model.
		{"openai", "anthropic/claude-sonnet-4-5", "", `"anthropic/claude-sonnet-4-5" not found`},
		{"azure", "openai/gpt-4o", "", `"openai/gpt-4o" not found`},
		{"openrouter", "openai/not-a-model", "", `"openai/not-a-model" not found`},
		// No provider recorded: the prefix is not taken for one.
		{"", "openai/gpt-4o", "", `"openai/gpt-4o" not found`},
	}
	for _, tc := range cases {
		c := &replaycase.Case{Steps: []replaycase.Step{llmStep("01", tc.provider, tc.model, u)}}
		Apply(c, tbl, nil)
		got := c.Steps[0].Cost
		if tc.wantModel == "" {
			if got.Status != replaycase.CostUnpriced || !strings.Contains(got.Detail, tc.wantDetail) {
				t.Errorf("%s %s: want unpriced (%s), got %s %q", tc.provider, tc.model, tc.wantDetail, got.Status, got.Detail)
			}
			continue
		}
		if got.Status != replaycase.CostComputed || got.ModelID != tc.wantModel {
			t.Errorf("%s %s: want computed as %s, got %s %s %q", tc.provider, tc.model, tc.wantModel, got.Status, got.ModelID, got.Detail)
		}
		if tc.wantDetail == "" && got.Detail != "" || !strings.Contains(got.Detail, tc.wantDetail) {
			t.Errorf("%s %s: detail %q, want %q", tc.provider, tc.model, got.Detail, tc.wantDetail)
		}
	}
}
