package normalize

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/internal/pdatawalk"
	"github.com/reprise-dev/reprise/replaycase"
)

// checkBuild builds the case of td and ld and asserts what must hold whatever the telemetry
// says. inputs are the fuzzed strings the telemetry was made of:
//   - the case survives the canonical encode / decode round trip unchanged;
//   - every step, finding and tool call points at a span that was sent;
//   - no text is invented: every text a message part holds is part of an input (or a structured
//     input value kept as its JSON);
//   - no number is invented: every token count and sampling parameter is a number an input
//     holds (total tokens may be input + output).
func checkBuild(t *testing.T, td ptrace.Traces, ld plog.Logs, inputs ...string) {
	t.Helper()
	c, findings, genAI := Build(td, ld)
	if !genAI {
		return
	}
	sent := map[string]bool{}
	for s := range pdatawalk.Spans(td) {
		sent[s.Span.SpanID().String()] = true
	}
	for i, st := range c.Steps {
		assert.Equal(t, i, st.Index)
		assert.True(t, sent[st.SpanID], "step %d has a span id that was not sent", i)
		assert.NotEmpty(t, st.Conventions, "step %d names no convention", i)
	}
	for _, f := range findings {
		assert.True(t, f.SpanID == "" || sent[f.SpanID], "finding %v points at a span that was not sent", f)
	}
	for _, tc := range c.ToolCalls {
		assert.True(t, tc.SpanID == "" || sent[tc.SpanID], "tool call %v", tc)
		assert.True(t, tc.RequestedBy == "" || sent[tc.RequestedBy], "tool call %v", tc)
	}

	known := newKnownValues(inputs)
	for _, st := range c.Steps {
		for _, msgs := range [][]replaycase.Message{st.InputMessages, st.OutputMessages, {{Parts: st.SystemInstructions}}} {
			for _, m := range msgs {
				for _, p := range m.Parts {
					for _, s := range []string{p.Content, p.Arguments, p.Response} {
						assert.True(t, known.text(s), "text %q of a %s part is in no input", s, p.Type)
					}
				}
			}
		}
		u := st.Usage
		for _, n := range []int64{u.InputTokens, u.OutputTokens, u.CacheReadInputTokens, u.CacheWriteInputTokens, u.ReasoningOutputTokens} {
			assert.True(t, n == 0 || known.number(float64(n)), "token count %d is in no input", n)
		}
		assert.True(t, u.TotalTokens == u.InputTokens+u.OutputTokens || known.number(float64(u.TotalTokens)), "total tokens %d", u.TotalTokens)
		mc := st.ModelConfig
		for _, f := range []*float64{mc.Temperature, mc.TopP} {
			assert.True(t, f == nil || known.number(*f), "parameter %v is in no input", f)
		}
		for _, n := range []*int64{mc.MaxTokens, mc.Seed} {
			assert.True(t, n == nil || known.number(float64(*n)), "parameter %v is in no input", n)
		}
	}

	for _, e := range c.Evaluations {
		assert.True(t, e.ScoreValue == nil || known.number(*e.ScoreValue), "evaluation score %v is in no input", e.ScoreValue)
		for _, s := range []string{e.Name, e.ScoreLabel, e.Explanation} {
			assert.True(t, known.text(s), "evaluation text %q is in no input", s)
		}
	}
	for _, st := range c.Steps {
		for _, ex := range st.Exceptions {
			for _, s := range []string{ex.Type, ex.Message, ex.Stacktrace} {
				assert.True(t, known.text(s), "exception text %q is in no input", s)
			}
		}
	}

	for _, f := range findings {
		c.Quarantine(f.Code, f.Detail, f.SpanID)
	}
	assertRoundTrip(t, c)
}

// assertRoundTrip asserts that the canonical form carries c unchanged.
func assertRoundTrip(t *testing.T, c *replaycase.Case) {
	t.Helper()
	out := ptrace.NewTraces()
	require.NoError(t, replaycase.Encode(c, out))
	back, err := replaycase.Decode(out)
	require.NoError(t, err)
	require.Len(t, back, 1)
	// Parquet stores an absent and an empty list alike, and so may the canonical form.
	emptyAsNil(reflect.ValueOf(c))
	emptyAsNil(reflect.ValueOf(back[0]))
	assert.Equal(t, c, back[0], "the canonical round trip changed the case")
}

// emptyAsNil sets every empty slice and map reachable from v to nil.
func emptyAsNil(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			emptyAsNil(v.Elem())
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				emptyAsNil(v.Field(i))
			}
		}
	case reflect.Slice, reflect.Map:
		if v.Len() == 0 && !v.IsNil() && v.CanSet() {
			v.Set(reflect.Zero(v.Type()))
			return
		}
		if v.Kind() == reflect.Slice {
			for i := 0; i < v.Len(); i++ {
				emptyAsNil(v.Index(i))
			}
		}
	}
}

// validUTF8 repairs s as the processor does before a trace reaches the normalizer: text that
// is not UTF-8 cannot be written to Parquet and is flagged there, not here.
func validUTF8(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }

// knownValues are the strings and numbers the fuzzed inputs hold, looked into as JSON too
// (strings that are JSON again included).
type knownValues struct {
	strs    []string
	numbers map[float64]bool
}

func newKnownValues(inputs []string) *knownValues {
	k := &knownValues{numbers: map[float64]bool{}}
	for _, s := range inputs {
		k.addString(s, 0)
	}
	return k
}

func (k *knownValues) addString(s string, depth int) {
	k.strs = append(k.strs, s)
	if f, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil {
		k.numbers[f] = true
	}
	if n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err == nil {
		k.numbers[float64(n)] = true
	}
	var v any
	if depth < 4 && json.Unmarshal([]byte(s), &v) == nil {
		k.addValue(v, depth+1)
	}
}

func (k *knownValues) addValue(v any, depth int) {
	switch t := v.(type) {
	case string:
		k.addString(t, depth)
	case float64:
		k.numbers[t] = true
	case []any:
		for _, x := range t {
			k.addValue(x, depth)
		}
	case map[string]any:
		for key, x := range t {
			k.strs = append(k.strs, key)
			k.addValue(x, depth)
		}
	}
}

// text reports whether s is part of a known string, or is JSON (a structured value kept as its
// encoding).
func (k *knownValues) text(s string) bool {
	if s == "" || json.Valid([]byte(s)) {
		return true
	}
	for _, known := range k.strs {
		if strings.Contains(known, s) {
			return true
		}
	}
	return false
}

func (k *knownValues) number(f float64) bool {
	if k.numbers[f] {
		return true
	}
	for n := range k.numbers { // int64 conversion of a large float
		if float64(int64(n)) == f {
			return true
		}
	}
	return false
}
