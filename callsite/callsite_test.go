package callsite_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/callsite"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/normalize"
	"github.com/reprise-dev/reprise/replaycase"
)

// liveBodies are the request bodies the OpenAI SDK really sent in the fixture run, as
// OpenInference recorded them in input.value.
func liveBodies(t testing.TB) []map[string]any {
	var out []map[string]any
	td := testfixtures.Traces(t, testfixtures.OpenInference)
	spans := td.ResourceSpans().At(0).ScopeSpans().At(1).Spans()
	for i := 0; i < spans.Len(); i++ {
		var body map[string]any
		v, _ := spans.At(i).Attributes().Get("input.value")
		require.NoError(t, json.Unmarshal([]byte(v.Str()), &body))
		out = append(out, body)
	}
	return out
}

func liveRequest(body map[string]any) callsite.Request {
	r := normalize.ParseOpenAIRequest(body)
	return callsite.Request{Model: r.Model.RequestModel, Messages: r.Messages, Tools: r.Tools, Params: r.Model}
}

// A live request computes to the recorded step's ID, whichever instrumentation recorded it.
func TestLiveRequestMatchesEveryRecording(t *testing.T) {
	bodies := liveBodies(t)
	require.Len(t, bodies, 2)
	for _, run := range []string{testfixtures.OTelEvents, testfixtures.Traceloop, testfixtures.OpenInference} {
		c, _, _ := normalize.Build(testfixtures.Traces(t, run), testfixtures.Logs(t, run))
		var llm []replaycase.Step
		for _, st := range c.Steps {
			if st.Kind == replaycase.StepLLM {
				llm = append(llm, st)
			}
		}
		require.Len(t, llm, 2)
		for i, st := range llm {
			assert.Equal(t, st.CallSiteID, liveRequest(bodies[i]).ID(st.CallSiteFields), "%s call %d", run, i)
		}
	}
}

func TestAChangedPromptChangesTheID(t *testing.T) {
	body := liveBodies(t)[0]
	fields := []string{callsite.FieldMaxTokens, callsite.FieldTemperature}
	before := liveRequest(body).ID(fields)
	body["messages"].([]any)[1].(map[string]any)["content"] = "What is the weather in Lyon today?"
	assert.NotEqual(t, before, liveRequest(body).ID(fields))
	body["messages"].([]any)[1].(map[string]any)["content"] = "What is the weather in Paris today?"
	assert.Equal(t, before, liveRequest(body).ID(fields))
	body["temperature"] = 0.9
	assert.NotEqual(t, before, liveRequest(body).ID(fields), "a recorded parameter counts")
	assert.Equal(t, liveRequest(liveBodies(t)[0]).ID(nil), liveRequest(body).ID(nil), "an unrecorded one does not")
}

func TestCanonicalFormIsStable(t *testing.T) {
	// Key order, number spelling and argument whitespace do not matter; values do.
	a := callsite.Request{Model: "m", Messages: []replaycase.Message{{Role: "assistant", Parts: []replaycase.Part{{Type: "tool_call", ID: "c1", Name: "f", Arguments: `{"b": 1.0, "a": "x"}`}}}}}
	b := callsite.Request{Model: "m", Messages: []replaycase.Message{{Role: "assistant", Parts: []replaycase.Part{{Type: "tool_call", ID: "c1", Name: "f", Arguments: `{"a":"x","b":1}`}}}}}
	assert.Equal(t, a.ID(nil), b.ID(nil))
	canon, err := callsite.CanonicalJSON(a.Canonical(nil))
	require.NoError(t, err)
	assert.Equal(t, `{"messages":[{"content":[],"role":"assistant","tool_calls":[{"arguments":{"a":"x","b":1},"id":"c1","name":"f"}]}],"model":"m","v":1}`, string(canon))
}
