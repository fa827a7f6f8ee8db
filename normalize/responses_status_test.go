package normalize

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/replaycase"
	"github.com/reprise-dev/reprise/wireapi"
)

// OpenInference's JS OpenAI instrumentation records no llm.finish_reason for a Responses call;
// only the response body in output.value says that the model was cut ("status": "incomplete",
// incomplete_details.reason). Read without it, an answer cut at max_output_tokens was replayed
// as a completed response, and the agent (the OpenAI Agents SDK raises on incomplete) saw a
// run other than the recorded one.
func TestOpenInferenceResponsesIncompleteIsKept(t *testing.T) {
	for _, tc := range []struct{ reason, want string }{
		{"max_output_tokens", "length"},
		{"content_filter", "content_filter"},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			td, ld := recordedRun(t, "node", "openinference-responses")
			const last = "46afa6ad8ef975d6" // the call that answers in text
			found := false
			spanNamed(t, td, "OpenAI Responses", func(sp ptrace.Span) {
				if sp.SpanID().String() != last {
					return
				}
				found = true
				a := sp.Attributes()
				v, _ := a.Get("output.value")
				body := strings.Replace(v.Str(), `"status":"completed","model"`, `"status":"incomplete","incomplete_details":{"reason":"`+tc.reason+`"},"model"`, 1)
				require.NotEqual(t, v.Str(), body)
				a.PutStr("output.value", body)
			})
			require.True(t, found)
			c, _, _ := Build(td, ld)
			st := stepOf(t, c, last)
			assert.Equal(t, []string{tc.want}, st.FinishReasons)
			require.Len(t, st.OutputMessages, 1)
			assert.Equal(t, tc.want, st.OutputMessages[0].FinishReason)

			// What the replay answers with.
			assert.Contains(t, string(wireapi.ResponsesResponseJSON(&wireapi.ResponsesRequest{}, &st)), `"status":"incomplete"`)
		})
	}
	// A completed call keeps what it recorded.
	td, ld := recordedRun(t, "node", "openinference-responses")
	c, _, _ := Build(td, ld)
	for _, st := range c.Steps {
		if st.Kind == replaycase.StepLLM {
			assert.Nil(t, st.FinishReasons, st.SpanID)
		}
	}
}
