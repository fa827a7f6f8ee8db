package normalize

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/callsite"
	"github.com/reprise-dev/reprise/replaycase"
	"github.com/reprise-dev/reprise/wireapi"
)

// markToolResults rewrites the recorded Anthropic request body (input.value) of every span that
// sends tool results, giving its tool_result blocks is_error as errs says by tool_use_id (a
// result not named keeps its body as recorded), and returns the last body rewritten.
func markToolResults(t *testing.T, td ptrace.Traces, errs map[string]bool) []byte {
	t.Helper()
	messages := func(body any) []any { return body.(map[string]any)["messages"].([]any) }
	return editToolResults(t, td, "input.value", "tool_result", messages, func(b map[string]any) {
		id, _ := b["tool_use_id"].(string)
		if failed, ok := errs[id]; ok {
			b["is_error"] = failed
		}
	})
}

// editToolResults rewrites the JSON attribute key of every span whose value holds a block of
// type blockType, calling edit on each such block of the messages (messagesOf the decoded
// value), and returns the last text written.
func editToolResults(t *testing.T, td ptrace.Traces, key, blockType string, messagesOf func(any) []any, edit func(block map[string]any)) []byte {
	t.Helper()
	var last []byte
	rss := td.ResourceSpans()
	for i := range rss.Len() {
		sss := rss.At(i).ScopeSpans()
		for j := range sss.Len() {
			spans := sss.At(j).Spans()
			for k := range spans.Len() {
				a := spans.At(k).Attributes()
				v, ok := a.Get(key)
				if !ok || !strings.Contains(v.Str(), blockType) {
					continue
				}
				var decoded any
				require.NoError(t, json.Unmarshal([]byte(v.Str()), &decoded))
				for _, m := range messagesOf(decoded) {
					blocks, _ := m.(map[string]any)["content"].([]any)
					for _, bl := range blocks {
						if b, _ := bl.(map[string]any); b["type"] == blockType {
							edit(b)
						}
					}
				}
				raw, err := json.Marshal(decoded)
				require.NoError(t, err)
				a.PutStr(key, string(raw))
				last = raw
			}
		}
	}
	require.NotNil(t, last, "the run sends tool results back to the model")
	return last
}

// lastModelCall is the case's last LLM step, the one that was sent the tool results.
func lastModelCall(t *testing.T, c *replaycase.Case) *replaycase.Step {
	t.Helper()
	for i := len(c.Steps) - 1; i >= 0; i-- {
		if c.Steps[i].Kind == replaycase.StepLLM {
			return &c.Steps[i]
		}
	}
	t.Fatal("no model call")
	return nil
}

// toolResultMarks lists a step's tool results as "id error?".
func toolResultMarks(st *replaycase.Step) []string {
	var out []string
	for _, m := range st.InputMessages {
		for _, p := range m.Parts {
			if p.Type == "tool_call_response" {
				mark := p.ID
				if p.Error {
					mark += " is_error"
				}
				out = append(out, mark)
			}
		}
	}
	return out
}

// openinference-instrumentation-anthropic records the request body as input.value, is_error and
// all (the Python run of test/python, its second call's body given is_error true for Paris and
// false for Lyon, as an agent whose first lookup failed sends it): the failed result is marked,
// the other is not; the step's call-site id is the one the same live request computes, and it
// covers is_error (the body records it), so the request with Paris sent as a success has
// another id.
func TestAnthropicToolResultIsErrorFromTheRecordedBody(t *testing.T) {
	td, ld := recordedRun(t, "python", "anthropic-openinference")
	body := markToolResults(t, td, map[string]bool{"toolu_1_0": true, "toolu_1_1": false})
	c, findings, _ := Build(td, ld)
	require.Empty(t, findings)
	st := lastModelCall(t, c)
	assert.Equal(t, []string{"toolu_1_0 is_error", "toolu_1_1"}, toolResultMarks(st))
	require.Contains(t, st.CallSiteFields, callsite.FieldIsError)

	live := func(body []byte) callsite.Request {
		r, err := wireapi.ParseMessagesRequest(body)
		require.NoError(t, err)
		return callsite.Request{Model: r.Params.RequestModel, Messages: r.Messages, Tools: r.Tools, Params: r.Params}
	}
	assert.Equal(t, st.CallSiteID, live(body).ID(st.CallSiteFields), "the live request of the recorded call")
	succeeded := strings.Replace(string(body), `"is_error":true`, `"is_error":false`, 1)
	require.NotEqual(t, string(body), succeeded)
	assert.NotEqual(t, st.CallSiteID, live([]byte(succeeded)).ID(st.CallSiteFields), "a request that differs only by is_error")
}

// A recorded body without is_error (the run as captured) sent every result as a success: the
// step covers is_error, so a live request marking one as failed misses it, while its id is the
// one it had before is_error was read (the mark is in the canonical form only when true).
func TestAnthropicRecordedBodyWithoutIsErrorKeepsItsID(t *testing.T) {
	c, findings, _ := Build(recordedRun(t, "python", "anthropic-openinference"))
	require.Empty(t, findings)
	st := lastModelCall(t, c)
	assert.Equal(t, []string{"toolu_1_0", "toolu_1_1"}, toolResultMarks(st))
	require.Contains(t, st.CallSiteFields, callsite.FieldIsError)
	without := make([]string, 0, len(st.CallSiteFields))
	for _, f := range st.CallSiteFields {
		if f != callsite.FieldIsError {
			without = append(without, f)
		}
	}
	assert.Equal(t, st.CallSiteID, callsite.FromStep(st).ID(without), "the id of the field set without is_error")

	failed := *st
	failed.InputMessages = append([]replaycase.Message(nil), st.InputMessages...)
	for i, m := range failed.InputMessages {
		if len(m.Parts) == 1 && m.Parts[0].ID == "toolu_1_0" {
			failed.InputMessages[i].Parts = []replaycase.Part{m.Parts[0]}
			failed.InputMessages[i].Parts[0].Error = true
		}
	}
	assert.NotEqual(t, st.CallSiteID, callsite.FromStep(&failed).ID(st.CallSiteFields))
	assert.Equal(t, st.CallSiteID, callsite.FromStep(&failed).ID(without), "a recording without the field ignores the mark")
}

// The GenAI semconv messages (the Anthropic SDK's own spans, OpenLLMetry) have no member for a
// failed result: such a step does not cover is_error, so a live request's mark is ignored for
// it, as any parameter its telemetry did not record.
func TestSemconvToolResultsDoNotCoverIsError(t *testing.T) {
	c, _, _ := Build(recordedRun(t, "node", "anthropic-traceloop-create"))
	st := lastModelCall(t, c)
	require.NotEmpty(t, toolResultMarks(st))
	assert.NotContains(t, st.CallSiteFields, callsite.FieldIsError)
}
