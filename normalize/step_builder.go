package normalize

import (
	"errors"
	"fmt"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/reprise-dev/reprise/replaycase"
)

// stepBuilder collects what the adapters read from one span. Its setters fill a field only while
// it is empty, which is what gives the adapters their precedence.
type stepBuilder struct {
	normalized
	spanID string
	// plainSystem is gen_ai.system_instructions recorded as plain text (see plainInstructions):
	// dropped again when the input messages turn out to begin with the same system message.
	plainSystem string
	// conv is the convention whose adapter reads the span now; offers notes which one offered
	// a value last for the fields two conventions may disagree on (conflicting_conventions.go).
	conv   string
	offers offers
}

// problem records content an adapter could not read. Truncated JSON gets its own code.
func (b *stepBuilder) problem(where string, err error) {
	code := replaycase.ReasonUnparseableContent
	if errors.Is(err, errTruncated) {
		code = replaycase.ReasonTruncatedContent
	}
	b.Findings = append(b.Findings, replaycase.Reason{Code: code, Detail: fmt.Sprintf("%s: %v", where, err), SpanID: b.spanID})
}

func (b *stepBuilder) kind(k replaycase.StepKind, op string) {
	if b.Step.Kind == "" {
		b.Step.Kind = k
	}
	if b.Step.Operation == "" {
		b.Step.Operation = op
	}
}

func (b *stepBuilder) retrieval() *replaycase.Retrieval {
	if b.Step.Retrieval == nil {
		b.Step.Retrieval = &replaycase.Retrieval{SpanID: b.spanID}
	}
	return b.Step.Retrieval
}

func (b *stepBuilder) toolCall() *replaycase.ToolCall {
	if b.Step.ToolCall == nil {
		b.Step.ToolCall = &replaycase.ToolCall{SpanID: b.spanID}
	}
	return b.Step.ToolCall
}

func (b *stepBuilder) setInput(msgs []replaycase.Message) {
	if len(msgs) > 0 && b.firstOffer(&b.offers.input) && len(b.Step.InputMessages) > 0 {
		b.compareMessages("input", b.Step.InputMessages, msgs)
	}
	if len(b.Step.InputMessages) == 0 {
		b.Step.InputMessages = msgs
	}
	if b.plainSystem != "" && startsWithSystem(b.Step.InputMessages, b.plainSystem) {
		b.Step.SystemInstructions, b.plainSystem = nil, ""
	}
}

func (b *stepBuilder) setOutput(msgs []replaycase.Message) {
	if len(msgs) > 0 && b.firstOffer(&b.offers.output) && len(b.Step.OutputMessages) > 0 {
		b.compareMessages("output", b.Step.OutputMessages, msgs)
	}
	if len(b.Step.OutputMessages) == 0 {
		b.Step.OutputMessages = msgs
	}
}

func setStr(dst *string, v string) {
	if *dst == "" {
		*dst = v
	}
}

// setInt fills a parameter from the first of keys that holds an integer. A value that is
// there but is not an integer is a finding, never a silent "unrecorded".
func (b *stepBuilder) setInt(dst **int64, a pcommon.Map, keys ...string) {
	if *dst == nil {
		if n, ok := readNumber(b, a, replaycase.ReasonInvalidParameter, toInt, keys); ok {
			*dst = &n
		}
	}
}

// setFloat is setInt for a parameter that may be fractional.
func (b *stepBuilder) setFloat(dst **float64, a pcommon.Map, keys ...string) {
	if *dst == nil {
		if f, ok := readNumber(b, a, replaycase.ReasonInvalidParameter, toFloat, keys); ok {
			*dst = &f
		}
	}
}

// setUsage fills a token count from the first of keys that holds an integer. A value that is
// there but is not an integer is a finding, never a silent 0. A count an earlier convention
// filled is compared instead.
func (b *stepBuilder) setUsage(dst *int64, a pcommon.Map, keys ...string) {
	if *dst != 0 {
		b.compareCount(*dst, a, keys)
		return
	}
	if n, ok := readNumber(b, a, replaycase.ReasonInvalidUsage, toInt, keys); ok {
		*dst = n
	}
}

// readNumber returns the first of keys whose value parse accepts. When none does but one
// holds something (not an empty string), that value is reported under code.
func readNumber[T any](b *stepBuilder, a pcommon.Map, code string, parse func(any) (T, bool), keys []string) (T, bool) {
	var zero T
	bad := ""
	for _, k := range keys {
		v, ok := a.Get(k)
		if !ok {
			continue
		}
		if n, ok := parse(v.AsRaw()); ok {
			return n, true
		}
		if bad == "" && v.AsString() != "" {
			bad = fmt.Sprintf("%s is %s", k, quoteValue(v))
		}
	}
	if bad != "" {
		b.invalid(code, bad+", not a number")
	}
	return zero, false
}

// mergeModelConfig fills the fields of dst that are still empty from src.
func mergeModelConfig(dst *replaycase.ModelConfig, src replaycase.ModelConfig) {
	setStr(&dst.Provider, src.Provider)
	setStr(&dst.RequestModel, src.RequestModel)
	setStr(&dst.ResponseModel, src.ResponseModel)
	setPointer(&dst.Temperature, src.Temperature)
	setPointer(&dst.TopP, src.TopP)
	setPointer(&dst.MaxTokens, src.MaxTokens)
	setPointer(&dst.Seed, src.Seed)
	if dst.Stop == nil {
		dst.Stop = src.Stop
	}
	setStr(&dst.ToolChoice, src.ToolChoice)
	setPointer(&dst.TopK, src.TopK)
	setPointer(&dst.FrequencyPenalty, src.FrequencyPenalty)
	setPointer(&dst.PresencePenalty, src.PresencePenalty)
	setPointer(&dst.ChoiceCount, src.ChoiceCount)
	setStr(&dst.OutputType, src.OutputType)
	setStr(&dst.ResponseFormat, src.ResponseFormat)
	setStr(&dst.ReasoningEffort, src.ReasoningEffort)
	setStr(&dst.ReasoningSummary, src.ReasoningSummary)
	setStr(&dst.Thinking, src.Thinking)
	setPointer(&dst.ParallelToolCalls, src.ParallelToolCalls)
	setStr(&dst.Verbosity, src.Verbosity)
	setStr(&dst.LogitBias, src.LogitBias)
}

// setPointer is setStr for a parameter recorded as a pointer: nil is "not recorded".
func setPointer[T any](dst **T, v *T) {
	if *dst == nil {
		*dst = v
	}
}
