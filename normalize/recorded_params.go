package normalize

import (
	"slices"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/reprise-dev/reprise/replaycase"
	"github.com/reprise-dev/reprise/wireapi"
)

// recordedParams holds the model configuration read from OpenInference's
// llm.invocation_parameters texts (textCache). The instrumentation records the whole request
// but its messages there, so every call of an agent records the same text, tools included:
// with twenty tools it was read twice per call (the parameters checked, then parsed as the API
// would), 7 % of the collector's CPU in a burst (docs/benchmarks.md, part 21).
var recordedParams = newTextCache(cloneModelConfig)

// cloneModelConfig copies what a ModelConfig points to, so that no two steps share it.
func cloneModelConfig(mc replaycase.ModelConfig) replaycase.ModelConfig {
	mc.Temperature = clonePointer(mc.Temperature)
	mc.TopP = clonePointer(mc.TopP)
	mc.MaxTokens = clonePointer(mc.MaxTokens)
	mc.Seed = clonePointer(mc.Seed)
	mc.TopK = clonePointer(mc.TopK)
	mc.FrequencyPenalty = clonePointer(mc.FrequencyPenalty)
	mc.PresencePenalty = clonePointer(mc.PresencePenalty)
	mc.ChoiceCount = clonePointer(mc.ChoiceCount)
	mc.ParallelToolCalls = clonePointer(mc.ParallelToolCalls)
	mc.Stop = slices.Clone(mc.Stop)
	return mc
}

func clonePointer[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// openInferenceParams reads the model configuration of llm.invocation_parameters and reports
// what is wrong with it. A text read without a problem is read once.
func openInferenceParams(a pcommon.Map, b *stepBuilder) replaycase.ModelConfig {
	recorded, ok := a.Get("llm.invocation_parameters")
	text := ok && recorded.Type() == pcommon.ValueTypeStr
	if text {
		if mc, ok := recordedParams.get(recorded.Str()); ok {
			return mc
		}
	}
	found := len(b.Findings)
	mc, isObject := readOpenInferenceParams(a, b)
	if text && isObject && len(b.Findings) == found {
		recordedParams.put(recorded.Str(), mc)
	}
	return mc
}

// readOpenInferenceParams reads llm.invocation_parameters: the parameters checked, then parsed as
// the API would. isObject says whether it holds a JSON object.
func readOpenInferenceParams(a pcommon.Map, b *stepBuilder) (mc replaycase.ModelConfig, isObject bool) {
	params, ok := invocationParameters(a, b)
	if !ok {
		return replaycase.ModelConfig{}, false
	}
	if err := responseEcho(params); err != nil {
		b.problem("llm.invocation_parameters", err)
		return replaycase.ModelConfig{}, true
	}
	b.checkRequestNumbers(params, "llm.invocation_parameters")
	recorded, _ := a.Get("llm.invocation_parameters")
	raw := recordedText(recorded, params)
	// A parameter of the wrong type leaves the others unread, as the API would refuse the call.
	mc, _ = wireapi.ParseChatParams(raw)
	b.setOutputFormat(anthropicOutputFormat, &mc, params, raw, "llm.invocation_parameters")
	b.setOutputFormat(responsesOutputFormat, &mc, params, raw, "llm.invocation_parameters")
	b.checkSettings(params, raw, "llm.invocation_parameters")
	return mc, true
}
