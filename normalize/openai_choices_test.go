package normalize

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/replaycase"
)

// A choice of a recorded Chat Completions response body that is not a JSON object (a string, a
// number, null) cannot be read: it is left out, and the step says so (unparseable_content), so
// that an answer short of it is not replayed as the one the model gave. What can be read is
// still read.
func TestOpenAIChoicesThatAreNotObjectsAreReported(t *testing.T) {
	// Read with llm.output_messages gone, the choices of output.value are the step's answer.
	withoutOutputMessages := func() (ptrace.Traces, int) {
		td := testfixtures.Traces(t, testfixtures.OpenInference)
		edited := 0
		eachSpan(td, func(sp ptrace.Span) {
			a := sp.Attributes()
			if _, ok := a.Get("output.value"); !ok || getStr(a, "output.mime_type") != "application/json" {
				return
			}
			a.RemoveIf(func(k string, _ pcommon.Value) bool { return strings.HasPrefix(k, "llm.output_messages.") })
			edited++
		})
		return td, edited
	}
	asRecorded, _ := withoutOutputMessages()
	want, findings, _ := Build(asRecorded, testfixtures.Logs(t, testfixtures.OpenInference))
	require.Empty(t, reasonsOf(findings, replaycase.ReasonUnparseableContent), "the recorded bodies read without a finding")

	td, edited := withoutOutputMessages()
	require.Positive(t, edited)
	eachSpan(td, func(sp ptrace.Span) {
		v, ok := sp.Attributes().Get("output.value")
		if !ok {
			return
		}
		var body map[string]any
		require.NoError(t, json.Unmarshal([]byte(v.Str()), &body))
		body["choices"] = append(body["choices"].([]any), "a choice that is no object", 42, nil)
		raw, err := json.Marshal(body)
		require.NoError(t, err)
		sp.Attributes().PutStr("output.value", string(raw))
	})
	c, findings, _ := Build(td, testfixtures.Logs(t, testfixtures.OpenInference))
	reported := reasonsOf(findings, replaycase.ReasonUnparseableContent)
	require.Len(t, reported, edited, "one finding per step whose body has them: %+v", findings)
	assert.Contains(t, reported[0].Detail, "output.value: 3 choice(s) are not a JSON object")
	for i, st := range want.Steps {
		assert.Equal(t, st.OutputMessages, c.Steps[i].OutputMessages, "what can be read is read as before")
	}
}

func TestParseOpenAIResponseSaysWhatItLeftOut(t *testing.T) {
	r, err := ParseOpenAIResponse(map[string]any{"choices": []any{
		nil, map[string]any{"message": map[string]any{"content": "hi"}, "finish_reason": "stop"}, "x",
	}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "2 choice(s) are not a JSON object")
	require.Len(t, r.Choices, 1)
	assert.Equal(t, "hi", r.Choices[0].Parts[0].Content)
	assert.Equal(t, []string{"stop"}, r.FinishReasons)

	_, err = ParseOpenAIResponse(map[string]any{"choices": []any{map[string]any{}}})
	assert.NoError(t, err)
}
