package callsite_test

import (
	"crypto/sha256"
	"encoding/hex"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/callsite"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/normalize"
	"github.com/reprise-dev/reprise/replaycase"
)

// referenceID is the original algorithm: build the canonical form as maps, marshal it and
// transform it with the RFC 8785 library. The streaming encoder must match it byte for byte.
func referenceID(t *testing.T, r callsite.Request, fields []string) (string, []byte) {
	b, err := callsite.CanonicalJSON(r.Canonical(fields))
	require.NoError(t, err)
	sum := sha256.Sum256(b)
	return "cs_" + hex.EncodeToString(sum[:16]), b
}

// everyField is every optional field (the version marker aside).
var everyField = []string{callsite.FieldMaxTokens, callsite.FieldSeed, callsite.FieldStop, callsite.FieldTemperature, callsite.FieldToolChoice, callsite.FieldTools, callsite.FieldTopP,
	callsite.FieldFrequencyPenalty, callsite.FieldPresencePenalty, callsite.FieldTopK, callsite.FieldChoiceCount, callsite.FieldOutputType, callsite.FieldResponseFormat, callsite.FieldIsError,
	callsite.FieldReasoningEffort, callsite.FieldReasoningSummary, callsite.FieldThinking,
	callsite.FieldParallelToolCalls, callsite.FieldVerbosity, callsite.FieldLogitBias}

func fieldSets(r callsite.Request) [][]string {
	all := everyField
	return [][]string{nil, r.RecordedFields(), all, {callsite.FieldV2}, append(all, callsite.FieldV2)}
}

func assertSameAsReference(t *testing.T, r callsite.Request, what string) {
	t.Helper()
	for _, fields := range fieldSets(r) {
		want, canon := referenceID(t, r, fields)
		assert.Equal(t, string(canon), string(r.AppendCanonical(nil, fields)), "%s %v", what, fields)
		assert.Equal(t, want, r.ID(fields), "%s %v", what, fields)
	}
}

// Every recorded step of every fixture, and every live SDK request, gets the same bytes from
// the streaming encoder as from the original marshal-and-transform.
func TestStreamingEncoderMatchesTheReferenceOnEveryFixture(t *testing.T) {
	steps := 0
	for _, run := range []string{testfixtures.OTelEvents, testfixtures.OTelNoContent, testfixtures.Traceloop, testfixtures.OpenInference} {
		c, _, _ := normalize.Build(testfixtures.Traces(t, run), testfixtures.Logs(t, run))
		for i := range c.Steps {
			if st := &c.Steps[i]; st.Kind == replaycase.StepLLM {
				assertSameAsReference(t, callsite.FromStep(st), run)
				steps++
			}
		}
	}
	for i, body := range liveBodies(t) {
		assertSameAsReference(t, liveRequest(body), "live body "+string(rune('0'+i)))
	}
	assert.Equal(t, 8, steps)
}

// Shapes the fixtures do not have: escapes, control characters, invalid UTF-8, non-ASCII keys
// (sorted by UTF-16), numbers in every form, tool results, URIs, files, names, parameters.
func TestStreamingEncoderMatchesTheReferenceOnEdgeCases(t *testing.T) {
	temp, topP, maxTokens, seed := 0.1, 1e-7, int64(1<<40), int64(-3)
	r := callsite.Request{
		Model:  "m\u2028<&>\"\\\x01\x7f\xff",
		System: []replaycase.Part{{Type: "text", Content: "sys\b\f\n\r\t"}},
		Messages: []replaycase.Message{
			{Role: "User", Name: "bob", Parts: []replaycase.Part{{Type: "text", Content: "é😀"}, {Type: "uri", URI: "https://x/a.png"}, {Type: "file", FileID: "f1"}, {Type: "text"}}},
			{Role: "assistant", Parts: []replaycase.Part{{Type: "tool_call", ID: "c1", Name: "f", Arguments: `{"é":1,"z":[1.5e300,-0,true,null,"\u0000"],"😀":{},"ﬀ":2,"a":{"b":1e21}}`}, {Type: "tool_call", ID: "c2", Name: "g", Arguments: "not json"}}},
			{Role: "tool", Parts: []replaycase.Part{{Type: "tool_call_response", ID: "c1", Response: "r1"}, {Type: "tool_call_response", ID: "c2", Response: ""}}},
			{Role: "tool", Parts: []replaycase.Part{{Type: "tool_call_response", ID: "c3", Response: "r3"}, {Type: "text", Content: "and text"}}},
			{Role: "user"},
		},
		Tools:  []replaycase.ToolDefinition{{Name: "f"}, {Name: "g"}},
		Params: replaycase.ModelConfig{Temperature: &temp, TopP: &topP, MaxTokens: &maxTokens, Seed: &seed, Stop: []string{"a", "\n"}, ToolChoice: `{"type":"function","function":{"name":"f"}}`},
	}
	assertSameAsReference(t, r, "edge cases")
	// The output format and the other sampling parameters, their defaults (left out) and not.
	freq, pres, topK, n := -2.0, 1e-9, int64(-1), int64(1)
	r.Params.FrequencyPenalty, r.Params.PresencePenalty, r.Params.TopK, r.Params.ChoiceCount = &freq, &pres, &topK, &n
	for _, format := range []struct{ outputType, responseFormat string }{
		{"text", `{"type":"text"}`}, {"json", `{"type":"json_schema","json_schema":{"name":"é","schema":{"😀":1,"a":[1e21]}}}`},
		{"image", "not json"}, {"", `[1`}, {"json", `{"type":"json_object"}`},
	} {
		r.Params.OutputType, r.Params.ResponseFormat = format.outputType, format.responseFormat
		assertSameAsReference(t, r, "response format "+format.responseFormat)
	}
	n = 4
	assertSameAsReference(t, r, "n of 4")
	// The reasoning settings, thinking disabled (the default, left out) and not.
	r.Params.ReasoningEffort, r.Params.ReasoningSummary = "é\u2028", "auto"
	for _, thinking := range []string{`{"type":"disabled"}`, `{"type":"enabled","budget_tokens":2048}`, `{"type":"adaptive","😀":[1e21]}`, "not json"} {
		r.Params.Thinking = thinking
		assertSameAsReference(t, r, "thinking "+thinking)
	}
	r.Params.ReasoningEffort, r.Params.ReasoningSummary, r.Params.Thinking = "", "", ""
	r.Params.FrequencyPenalty, r.Params.PresencePenalty, r.Params.TopK, r.Params.ChoiceCount = nil, nil, nil, nil
	r.Params.OutputType, r.Params.ResponseFormat = "", ""
	r.Params.ToolChoice = "auto"
	assertSameAsReference(t, r, "string tool_choice")
	assertSameAsReference(t, callsite.Request{}, "empty request")

	// Tool results that version 2 reads as their text, and ones it keeps.
	for _, resp := range []string{`[{"type":"text","text":"14C"}]`, ` [{"text":"a\u0000","type":"input_text","cache_control":{}}, {"type":"output_text","text":"\u00e9\n"}] `,
		`[]`, `[{"type":"image_url","image_url":{"url":"x"}}]`, `[{"type":"text"}]`, `[{"type":"text","text":1}]`, `["14C"]`, `[null]`, `[{"type":"text","text":"a"}`, "\xff["} {
		r.Messages[2].Parts[0].Response = resp
		assertSameAsReference(t, r, "tool result "+resp)
	}
	// A version-1 reading is what version 1 canonicalizes, and version 2 ignores it.
	v1 := r
	v1.Version1 = &callsite.Request{Model: "old", Messages: r.Messages[:1]}
	assertSameAsReference(t, v1, "version-1 reading")
	assert.Equal(t, v1.Version1.ID(nil), v1.ID(nil))
	assert.Equal(t, r.ID([]string{callsite.FieldV2}), v1.ID([]string{callsite.FieldV2}))
}

func BenchmarkID(b *testing.B) {
	body := liveBodies(b)[0]
	r := liveRequest(body)
	fields := r.RecordedFields()
	b.Run("streaming", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = r.ID(fields)
		}
	})
	b.Run("marshal+transform", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			c, _ := callsite.CanonicalJSON(r.Canonical(fields))
			_ = sha256.Sum256(c)
		}
	})
}

// The streaming encoder and the reference agree on any text and any tool arguments.
func FuzzStreamingEncoderMatchesTheReference(f *testing.F) {
	f.Add("What is the weather in Paris today?", `{"city":"Paris","unit":"celsius"}`, "user", 0.7)
	f.Add("\x00\u2028<>&\xff\xfe", `{"é":1,"😀":[1e21,-0.0,null]}`, "Assistant", -1e-7)
	f.Add("", `[`, "TOOL", 1.0)
	f.Fuzz(func(t *testing.T, text, args, role string, temp float64) {
		r := callsite.Request{Model: text, Messages: []replaycase.Message{
			{Role: role, Name: text, Parts: []replaycase.Part{{Type: "text", Content: text}}},
			{Role: "assistant", Parts: []replaycase.Part{{Type: "tool_call", ID: text, Name: text, Arguments: args}}},
			{Role: "tool", Parts: []replaycase.Part{{Type: "tool_call_response", ID: text, Response: args}}},
		}, Params: replaycase.ModelConfig{Temperature: &temp, ToolChoice: args, Stop: []string{text}}}
		assertSameAsReference(t, r, "fuzz")
	})
}

// A temperature or top_p that JSON cannot hold (NaN, ±Inf: a Parquet double can) gets an ID, the
// same from both encoders, instead of a panic: the replay extension computes the ID of every
// dataset step that has none when it indexes a dataset.
func TestNonFiniteParametersGetAnID(t *testing.T) {
	msgs := []replaycase.Message{{Role: "user", Parts: []replaycase.Part{{Type: "text", Content: "Paris?"}}}}
	zero := 0.0
	ids := map[string]bool{callsite.Request{Model: "m", Messages: msgs, Params: replaycase.ModelConfig{Temperature: &zero}}.ID([]string{callsite.FieldTemperature}): true}
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		r := callsite.Request{Model: "m", Messages: msgs, Params: replaycase.ModelConfig{Temperature: &f, TopP: &f}}
		ids[r.ID(r.RecordedFields())] = true
		assertSameAsReference(t, r, "non-finite")
	}
	assert.Len(t, ids, 2, "NaN and ±Inf share one ID, not 0's")
}
