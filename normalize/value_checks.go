package normalize

import (
	"fmt"
	"math"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/replaycase"
)

// Values no API accepts. Temperature tops out at 2 (OpenAI; other providers stop at 1), top_p
// is a probability, max_tokens counts tokens to generate, the penalties lie in -2…2 (OpenAI,
// Gemini, vLLM), top_k counts tokens (-1 is vLLM's "all of them").
const (
	maxTemperature = 2
	maxTopP        = 1
	maxPenalty     = 2
	minTopK        = -1
)

// invalid records a value that cannot be right, so that it is flagged instead of read as 0
// or as "not recorded".
func (b *stepBuilder) invalid(code, detail string) {
	b.Findings = append(b.Findings, replaycase.Reason{Code: code, Detail: detail, SpanID: b.spanID})
}

// quoteValue shows an attribute value in a finding, shortened so that a huge value cannot
// flood the reasons.
func quoteValue(v pcommon.Value) string {
	s := v.AsString()
	if len(s) > 64 {
		s = s[:64] + "…"
	}
	if v.Type() == pcommon.ValueTypeStr {
		return fmt.Sprintf("%q", s)
	}
	return s
}

// The sampling parameters of a request body that checkRequestNumbers reads.
var (
	requestFloatFields = []string{"temperature", "top_p", "frequency_penalty", "presence_penalty"}
	requestIntFields   = []string{"max_tokens", "max_completion_tokens", "max_output_tokens", "seed", "n", "top_k"}
)

// requestFormatField is the output format of a request body that checkRequestNumbers checks.
const requestFormatField = "response_format"

// checkRequestNumbers reports the sampling parameters of a recorded request body that are
// there but hold no number, and a response_format that is no format object: the body parser
// reads such a field as absent, which must not pass in silence (a lost response_format would
// let a request for text match a recording made for JSON).
func (b *stepBuilder) checkRequestNumbers(body map[string]any, where string) {
	checkNumbers(b, body, where, replaycase.ReasonInvalidParameter, toFloat, requestFloatFields...)
	checkNumbers(b, body, where, replaycase.ReasonInvalidParameter, toInt, requestIntFields...)
	if raw, ok := body[requestFormatField]; ok && raw != nil {
		if f, ok := raw.(map[string]any); !ok || !isString(f["type"]) {
			b.invalid(replaycase.ReasonInvalidParameter, fmt.Sprintf("%s %s is %s, not a format object with a type", where, requestFormatField, text(raw)))
		}
	}
}

func isString(v any) bool {
	_, ok := v.(string)
	return ok
}

// checkNumbers reports, under code, each of keys that body holds but parse does not accept.
func checkNumbers[T any](b *stepBuilder, body map[string]any, where, code string, parse func(any) (T, bool), keys ...string) {
	for _, k := range keys {
		if raw, ok := body[k]; ok && raw != nil {
			if _, ok := parse(raw); !ok {
				b.invalid(code, fmt.Sprintf("%s %s is %s, not a number", where, k, text(raw)))
			}
		}
	}
}

// maxTokenCount bounds a step's token counts: 2^40, a thousand billion tokens, far past any
// model's context or output. Counts past it come from a client or exporter at fault, and they
// are left out so that the sums of a case's steps (at most 2^23 of them under any span limit)
// cannot wrap past int64 into a negative usage.
const maxTokenCount = 1 << 40

// checkRanges takes out of the step the token counts and parameters that are out of range,
// whichever convention or request body they came from, and reports each one.
func checkRanges(b *stepBuilder) {
	u := &b.Step.Usage
	for _, f := range []struct {
		name string
		n    *int64
	}{
		{"input_tokens", &u.InputTokens}, {"output_tokens", &u.OutputTokens},
		{"cache_read_input_tokens", &u.CacheReadInputTokens}, {"cache_write_input_tokens", &u.CacheWriteInputTokens},
		{"reasoning_output_tokens", &u.ReasoningOutputTokens}, {"total_tokens", &u.TotalTokens},
	} {
		switch {
		case *f.n < 0:
			b.invalid(replaycase.ReasonInvalidUsage, fmt.Sprintf("%s is %d, a negative token count", f.name, *f.n))
			*f.n = 0
		case *f.n > maxTokenCount:
			b.invalid(replaycase.ReasonInvalidUsage, fmt.Sprintf("%s is %d, past any model call's (%d)", f.name, *f.n, int64(maxTokenCount)))
			*f.n = 0
		}
	}

	mc := &b.Step.ModelConfig
	floatIn := func(name string, p **float64, min, max float64) {
		if *p != nil && (math.IsNaN(**p) || **p < min || **p > max) {
			b.invalid(replaycase.ReasonInvalidParameter, fmt.Sprintf("%s is %v, outside %v…%v", name, **p, min, max))
			*p = nil
		}
	}
	floatIn("temperature", &mc.Temperature, 0, maxTemperature)
	floatIn("top_p", &mc.TopP, 0, maxTopP)
	floatIn("frequency_penalty", &mc.FrequencyPenalty, -maxPenalty, maxPenalty)
	floatIn("presence_penalty", &mc.PresencePenalty, -maxPenalty, maxPenalty)
	if mc.MaxTokens != nil && *mc.MaxTokens <= 0 {
		b.invalid(replaycase.ReasonInvalidParameter, fmt.Sprintf("max_tokens is %d; a model call generates at least one token", *mc.MaxTokens))
		mc.MaxTokens = nil
	}
	if mc.ChoiceCount != nil && *mc.ChoiceCount <= 0 {
		b.invalid(replaycase.ReasonInvalidParameter, fmt.Sprintf("choice_count is %d; a model call returns at least one choice", *mc.ChoiceCount))
		mc.ChoiceCount = nil
	}
	if mc.TopK != nil && *mc.TopK < minTopK {
		b.invalid(replaycase.ReasonInvalidParameter, fmt.Sprintf("top_k is %d, below %d", *mc.TopK, minTopK))
		mc.TopK = nil
	}
	if r := b.Step.Retrieval; r != nil && r.TopK != nil && *r.TopK < 0 {
		b.invalid(replaycase.ReasonInvalidParameter, fmt.Sprintf("top_k is %d, a negative document count", *r.TopK))
		r.TopK = nil
	}
}

// spanTimes reads a span's start and end. A timestamp past the int64 nanoseconds a time can
// hold would wrap to before 1970: it is reported and left unset. An end before the start is
// reported and kept as recorded.
func spanTimes(sp ptrace.Span, report func(code, detail string)) (start, end time.Time) {
	read := func(which string, ts pcommon.Timestamp) time.Time {
		if uint64(ts) > math.MaxInt64 {
			report(replaycase.ReasonInvalidTimestamp, fmt.Sprintf("%s time %d ns is past year 2262 and cannot be represented", which, uint64(ts)))
			return time.Time{}
		}
		return replaycase.UnixNanoUTC(ts)
	}
	start, end = read("start", sp.StartTimestamp()), read("end", sp.EndTimestamp())
	if !start.IsZero() && !end.IsZero() && end.Before(start) {
		report(replaycase.ReasonEndBeforeStart, fmt.Sprintf("ends %s before it starts", start.Sub(end)))
	}
	return start, end
}

// score reads a retrieval document's relevance score, recorded at where: a finite number, else
// nil and a finding. A NaN or ±Inf (which an OTLP double or a "NaN" string can carry) would not
// survive the case's JSON, and a score that is no number must not vanish in silence.
func (b *stepBuilder) score(where string, raw any) *float64 {
	if raw == nil || raw == "" {
		return nil
	}
	if f, ok := toFloat(raw); ok && !math.IsNaN(f) && !math.IsInf(f, 0) {
		return &f
	}
	shown := text(raw)
	if len(shown) > 64 {
		shown = shown[:64] + "…"
	}
	if _, ok := raw.(string); ok {
		shown = fmt.Sprintf("%q", shown)
	}
	b.Findings = append(b.Findings, replaycase.Reason{Code: replaycase.ReasonUnparseableContent,
		Detail: fmt.Sprintf("%s is %s, not a finite number", where, shown), SpanID: b.spanID})
	return nil
}
