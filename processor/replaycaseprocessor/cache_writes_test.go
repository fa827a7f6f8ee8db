package replaycaseprocessor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/internal/pdatawalk"
	"github.com/reprise-dev/reprise/replaycase"
)

// A real OpenInference recording of two Anthropic calls (with the Anthropic SDK's own spans
// beside them), its first call made to write 30 tokens to the cache, 20 of them for one hour:
// the response body OpenInference records in output.value splits them, and the step prices
// the one-hour writes at their own price. The attributes count the 30 together.
//
// claude-haiku-4-5 (genai-prices 0.2.3, USD per million): input 1, output 5, cache_write_mtok
// 1.25, cache_write_1h_mtok 2. 11 uncached input tokens, 15 output, 10 five-minute and 20
// one-hour writes: 11×1 + 15×5 + 10×1.25 + 20×2 = 138.5 millionths of a dollar.
func TestOneHourCacheWritesOfARecordedAnthropicCall(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "normalize", "testdata", "node", "anthropic-openinference-create", "traces.json"))
	require.NoError(t, err)
	td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(raw)
	require.NoError(t, err)
	// What the instrumentations write for such a call: OpenInference's prompt count is Anthropic's
	// input_tokens (the cache left out); the Anthropic SDK's span counts the cache in.
	for s := range pdatawalk.Spans(td) {
		a := s.Span.Attributes()
		switch s.Span.SpanID().String() {
		case "22544812c4a1aae8":
			body, _ := a.Get("output.value")
			usage := `"usage":{"input_tokens":41,"output_tokens":15,"cache_read_input_tokens":0,"cache_creation_input_tokens":0}`
			require.True(t, strings.Contains(body.Str(), usage), "the recording's usage")
			a.PutStr("output.value", strings.Replace(body.Str(), usage, `"usage":{"input_tokens":11,"output_tokens":15,"cache_read_input_tokens":0,`+
				`"cache_creation_input_tokens":30,"cache_creation":{"ephemeral_5m_input_tokens":10,"ephemeral_1h_input_tokens":20}}`, 1))
			a.PutInt("llm.token_count.prompt", 11)
			a.PutInt("llm.token_count.total", 26)
		case "72a09b2806540360":
			a.PutInt("gen_ai.usage.cache_write.input_tokens", 30)
		}
	}

	h := newHarness(t, nil)
	h.sendTraces(td)
	h.advance(time.Hour)
	h.shutdown()
	cases := h.cases()
	require.Len(t, cases, 1)
	var llm []*replaycase.Step
	for i := range cases[0].Steps {
		if cases[0].Steps[i].Kind == replaycase.StepLLM {
			llm = append(llm, &cases[0].Steps[i])
		}
	}
	require.Len(t, llm, 2)
	first := llm[0]
	require.NotNil(t, first.Cost)
	assert.Equal(t, replaycase.Usage{InputTokens: 41, CacheWriteInputTokens: 30, OutputTokens: 15, TotalTokens: 56}, first.Usage)
	assert.Equal(t, replaycase.CostComputed, first.Cost.Status, first.Cost.Detail)
	require.NotNil(t, first.Cost.TotalUSD, first.Cost.Detail)
	assert.InDelta(t, 138.5e-6, *first.Cost.TotalUSD, 1e-12)
	assert.InDelta(t, 52.5e-6, *first.Cost.CacheWriteUSD, 1e-12)
	assert.Contains(t, first.Cost.Detail, "20 of the 30 cache write tokens were one-hour writes")
}
