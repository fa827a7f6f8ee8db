package callsite

import (
	"crypto/sha256"
	"encoding/hex"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/gowebpki/jcs"

	"github.com/reprise-dev/reprise/replaycase"
)

// The streaming canonical encoder writes the RFC 8785 form of Canonical(fields) straight from
// the request, without building maps and re-parsing them: object keys are written in their
// sorted order (fixed for the canonical shape, computed for JSON tool arguments), numbers in
// the ES6 form, strings with RFC 8785's minimal escaping. It must produce exactly
// CanonicalJSON(r.Canonical(fields)); the tests compare both over every fixture.

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// AppendCanonical appends the canonical JSON of r over the optional fields named to dst.
func (r Request) AppendCanonical(dst []byte, fields []string) []byte {
	var use [len(fieldOrder)]bool
	v2, errs := false, false
	for _, f := range fields {
		v2 = v2 || f == FieldV2
		errs = errs || f == FieldIsError
		for i, name := range fieldOrder {
			if f == name {
				use[i] = true
			}
		}
	}
	r, version := r.reading(v2)
	p := r.Params
	// Top-level keys in sorted order: frequency_penalty, logit_bias, max_tokens, messages,
	// model, n, output_type, parallel_tool_calls, presence_penalty, reasoning_effort,
	// reasoning_summary, response_format, seed, stop, temperature, thinking, tool_choice,
	// tools, top_k, top_p, v, verbosity.
	dst = append(dst, '{')
	if use[useFrequencyPenalty] && p.FrequencyPenalty != nil {
		dst = append(dst, `"frequency_penalty":`...)
		dst = appendNumber(dst, *p.FrequencyPenalty)
		dst = append(dst, ',')
	}
	if use[useLogitBias] {
		if bias, ok := logitBias(p.LogitBias); ok {
			dst = append(dst, `"logit_bias":`...)
			dst = appendValue(dst, bias)
			dst = append(dst, ',')
		}
	}
	if use[useMaxTokens] && p.MaxTokens != nil {
		dst = append(dst, `"max_tokens":`...)
		dst = appendNumber(dst, float64(*p.MaxTokens))
		dst = append(dst, ',')
	}
	dst = append(dst, `"messages":`...)
	dst = appendMessages(dst, r.System, r.Messages, v2, errs)
	dst = append(dst, `,"model":`...)
	dst = appendString(dst, r.Model)
	if use[useChoiceCount] && p.ChoiceCount != nil && *p.ChoiceCount != 1 {
		dst = append(dst, `,"n":`...)
		dst = appendNumber(dst, float64(*p.ChoiceCount))
	}
	if use[useOutputType] && p.OutputType != "" && p.OutputType != "text" {
		dst = append(dst, `,"output_type":`...)
		dst = appendString(dst, p.OutputType)
	}
	if use[useParallelToolCalls] && p.ParallelToolCalls != nil && !*p.ParallelToolCalls {
		dst = append(dst, `,"parallel_tool_calls":false`...)
	}
	if use[usePresencePenalty] && p.PresencePenalty != nil {
		dst = append(dst, `,"presence_penalty":`...)
		dst = appendNumber(dst, *p.PresencePenalty)
	}
	if use[useReasoningEffort] && p.ReasoningEffort != "" {
		dst = append(dst, `,"reasoning_effort":`...)
		dst = appendString(dst, p.ReasoningEffort)
	}
	if use[useReasoningSummary] && p.ReasoningSummary != "" {
		dst = append(dst, `,"reasoning_summary":`...)
		dst = appendString(dst, p.ReasoningSummary)
	}
	if use[useResponseFormat] {
		if format, ok := responseFormat(p.ResponseFormat); ok {
			dst = append(dst, `,"response_format":`...)
			dst = appendValue(dst, format)
		}
	}
	if use[useSeed] && p.Seed != nil {
		dst = append(dst, `,"seed":`...)
		dst = appendNumber(dst, float64(*p.Seed))
	}
	if use[useStop] && len(p.Stop) > 0 {
		dst = append(dst, `,"stop":[`...)
		for i, s := range p.Stop {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendString(dst, s)
		}
		dst = append(dst, ']')
	}
	if use[useTemperature] && p.Temperature != nil {
		dst = append(dst, `,"temperature":`...)
		dst = appendNumber(dst, *p.Temperature)
	}
	if use[useThinking] {
		if thinking, ok := thinking(p.Thinking); ok {
			dst = append(dst, `,"thinking":`...)
			dst = appendValue(dst, thinking)
		}
	}
	if use[useToolChoice] && p.ToolChoice != "" {
		dst = append(dst, `,"tool_choice":`...)
		dst = appendValue(dst, jsonValue(p.ToolChoice))
	}
	if use[useTools] {
		dst = append(dst, `,"tools":[`...)
		for i, t := range r.Tools {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendString(dst, t.Name)
		}
		dst = append(dst, ']')
	}
	if use[useTopK] && p.TopK != nil {
		dst = append(dst, `,"top_k":`...)
		dst = appendNumber(dst, float64(*p.TopK))
	}
	if use[useTopP] && p.TopP != nil {
		dst = append(dst, `,"top_p":`...)
		dst = appendNumber(dst, *p.TopP)
	}
	dst = append(dst, `,"v":`...)
	dst = strconv.AppendInt(dst, int64(version), 10)
	if use[useVerbosity] && p.Verbosity != "" {
		dst = append(dst, `,"verbosity":`...)
		dst = appendString(dst, p.Verbosity)
	}
	return append(dst, '}')
}

// The optional fields by their index in fieldOrder, the order AppendCanonical writes them.
const (
	useFrequencyPenalty = iota
	useLogitBias
	useMaxTokens
	useChoiceCount
	useOutputType
	useParallelToolCalls
	usePresencePenalty
	useReasoningEffort
	useReasoningSummary
	useResponseFormat
	useSeed
	useStop
	useTemperature
	useThinking
	useToolChoice
	useTools
	useTopK
	useTopP
	useVerbosity
)

// fieldOrder is the optional fields in the order AppendCanonical writes them.
var fieldOrder = [...]string{
	useFrequencyPenalty: FieldFrequencyPenalty, useLogitBias: FieldLogitBias, useMaxTokens: FieldMaxTokens,
	useChoiceCount: FieldChoiceCount, useOutputType: FieldOutputType, useParallelToolCalls: FieldParallelToolCalls,
	usePresencePenalty: FieldPresencePenalty, useReasoningEffort: FieldReasoningEffort,
	useReasoningSummary: FieldReasoningSummary, useResponseFormat: FieldResponseFormat, useSeed: FieldSeed,
	useStop: FieldStop, useTemperature: FieldTemperature, useThinking: FieldThinking, useToolChoice: FieldToolChoice,
	useTools: FieldTools, useTopK: FieldTopK, useTopP: FieldTopP, useVerbosity: FieldVerbosity,
}

// streamID is ID through the streaming encoder and a pooled buffer.
func (r Request) streamID(fields []string) string {
	bp := bufPool.Get().(*[]byte)
	b := r.AppendCanonical((*bp)[:0], fields)
	sum := sha256.Sum256(b)
	*bp = b
	bufPool.Put(bp)
	return "cs_" + hex.EncodeToString(sum[:16])
}

// appendMessages writes canonicalMessages(system, msgs, v2, errs) (see there for the shape).
func appendMessages(dst []byte, system []replaycase.Part, msgs []replaycase.Message, v2, errs bool) []byte {
	dst = append(dst, '[')
	first := true
	sep := func() {
		if !first {
			dst = append(dst, ',')
		}
		first = false
	}
	if len(system) > 0 {
		sep()
		dst = appendMessage(dst, replaycase.Message{Role: "system", Parts: system})
	}
	for _, m := range msgs {
		results, rest := 0, 0
		for _, p := range m.Parts {
			if p.Type == "tool_call_response" {
				sep()
				// {"content":[{"text":…,"type":"text"}],"is_error"?:true,"role":"tool","tool_call_id":…}
				dst = append(dst, `{"content":[{"text":`...)
				if v2 {
					dst = appendString(dst, ToolResultText(p.Response))
				} else {
					dst = appendString(dst, p.Response)
				}
				dst = append(dst, `,"type":"text"}]`...)
				if errs && p.Error {
					dst = append(dst, `,"is_error":true`...)
				}
				dst = append(dst, `,"role":"tool","tool_call_id":`...)
				dst = appendString(dst, p.ID)
				dst = append(dst, '}')
				results++
			} else if p.Type == "tool_call" || !emptyContent(p) {
				rest++
			}
		}
		if results > 0 && rest == 0 {
			continue
		}
		sep()
		dst = appendMessage(dst, m)
	}
	return append(dst, ']')
}

// emptyContent is a content part that canonicalMessages leaves out.
func emptyContent(p replaycase.Part) bool {
	return p.Type != "tool_call" && p.Type != "tool_call_response" && p.URI == "" && p.FileID == "" && p.Content == ""
}

// appendMessage writes {"content":[…],"name"?,"role","tool_calls"?}, without tool results.
func appendMessage(dst []byte, m replaycase.Message) []byte {
	dst = append(dst, `{"content":[`...)
	n := 0
	calls := 0
	for _, p := range m.Parts {
		switch {
		case p.Type == "tool_call":
			calls++
			continue
		case p.Type == "tool_call_response" || emptyContent(p):
			continue
		}
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		// Part keys in sorted order: file_id, text, type, uri.
		switch {
		case p.URI != "":
			dst = append(dst, `{"type":`...)
			dst = appendString(dst, p.Type)
			dst = append(dst, `,"uri":`...)
			dst = appendString(dst, p.URI)
		case p.FileID != "":
			dst = append(dst, `{"file_id":`...)
			dst = appendString(dst, p.FileID)
			dst = append(dst, `,"type":`...)
			dst = appendString(dst, p.Type)
		default:
			dst = append(dst, `{"text":`...)
			dst = appendString(dst, p.Content)
			dst = append(dst, `,"type":`...)
			dst = appendString(dst, p.Type)
		}
		dst = append(dst, '}')
	}
	dst = append(dst, ']')
	if m.Name != "" {
		dst = append(dst, `,"name":`...)
		dst = appendString(dst, m.Name)
	}
	dst = append(dst, `,"role":`...)
	dst = appendString(dst, lower(m.Role))
	if calls > 0 {
		dst = append(dst, `,"tool_calls":[`...)
		n = 0
		for _, p := range m.Parts {
			if p.Type != "tool_call" {
				continue
			}
			if n > 0 {
				dst = append(dst, ',')
			}
			n++
			// Tool call keys in sorted order: arguments, id, name.
			dst = append(dst, `{"arguments":`...)
			dst = appendValue(dst, jsonValue(p.Arguments))
			dst = append(dst, `,"id":`...)
			dst = appendString(dst, p.ID)
			dst = append(dst, `,"name":`...)
			dst = appendString(dst, p.Name)
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	return append(dst, '}')
}

// lower is strings.ToLower without an allocation for the usual, already lower-case roles.
func lower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' || c >= utf8.RuneSelf {
			return strings.ToLower(s)
		}
	}
	return s
}

// appendValue writes a decoded JSON value (maps, slices, strings, float64, bools, nil).
func appendValue(dst []byte, v any) []byte {
	switch t := v.(type) {
	case nil:
		return append(dst, "null"...)
	case bool:
		return strconv.AppendBool(dst, t)
	case float64:
		return appendNumber(dst, t)
	case string:
		return appendString(dst, t)
	case []any:
		dst = append(dst, '[')
		for i, x := range t {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendValue(dst, x)
		}
		return append(dst, ']')
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool { return lessUTF16(keys[i], keys[j]) })
		dst = append(dst, '{')
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendString(dst, k)
			dst = append(dst, ':')
			dst = appendValue(dst, t[k])
		}
		return append(dst, '}')
	}
	panic("callsite: not a decoded JSON value") // jsonValue only yields the types above
}

// lessUTF16 orders object keys as RFC 8785 does: by their UTF-16 code units.
func lessUTF16(a, b string) bool {
	ascii := true
	for i := 0; i < len(a) && ascii; i++ {
		ascii = a[i] < utf8.RuneSelf
	}
	for i := 0; i < len(b) && ascii; i++ {
		ascii = b[i] < utf8.RuneSelf
	}
	if ascii {
		return a < b
	}
	ua, ub := utf16.Encode([]rune(a)), utf16.Encode([]rune(b))
	for i := 0; i < len(ua) && i < len(ub); i++ {
		if ua[i] != ub[i] {
			return ua[i] < ub[i]
		}
	}
	return len(ua) < len(ub)
}

// appendNumber writes a number in the ES6 form RFC 8785 prescribes, and NaN and the infinities,
// which JSON cannot hold, as null (as ES6's JSON.stringify does; see canonicalNumber).
func appendNumber(dst []byte, f float64) []byte {
	s, err := jcs.NumberToJSON(f)
	if err != nil {
		return append(dst, "null"...)
	}
	return append(dst, s...)
}

// appendString writes s as an RFC 8785 string: only ", \ and control characters escaped
// (\b \f \n \r \t by name, the others as \u00xx), invalid UTF-8 as U+FFFD, as json.Marshal
// then jcs.Transform would.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c >= 0x20:
				dst = append(dst, c)
			case c == '\b':
				dst = append(dst, '\\', 'b')
			case c == '\f':
				dst = append(dst, '\\', 'f')
			case c == '\n':
				dst = append(dst, '\\', 'n')
			case c == '\r':
				dst = append(dst, '\\', 'r')
			case c == '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigit[c>>4], hexDigit[c&0xf])
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, "\uFFFD"...)
		} else {
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return append(dst, '"')
}

const hexDigit = "0123456789abcdef"
