package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/internal/pdatawalk"
	"github.com/reprise-dev/reprise/internal/testdataset"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/internal/testpipeline"
	"github.com/reprise-dev/reprise/replaycase"
)

// cutText is an edited answer that stopped at the token limit, its reason spelled as the
// Anthropic API does.
const cutText = `[{"role":"assistant","finish_reason":"max_tokens","parts":[{"type":"text","content":"It is snow"}]}]`

// nodeRunDataset writes the test/node run (normalize/testdata/node/<run>: OpenInference spans,
// which record each request body as input.value) into a new dataset and returns its root, the
// case and the request bodies the agent sent, in order.
func nodeRunDataset(t *testing.T, run string) (string, *replaycase.Case, [][]byte) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "normalize", "testdata", "node", run, "traces.json"))
	require.NoError(t, err)
	td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(raw)
	require.NoError(t, err)
	var requests [][]byte
	for s := range pdatawalk.Spans(td) {
		if v, ok := s.Span.Attributes().Get("input.value"); ok {
			requests = append(requests, []byte(v.Str()))
		}
	}
	root := t.TempDir()
	w := testdataset.Writer(t, root, "zstd")
	// The log events come from the run named: OpenInference's has none, nor has this one.
	cases := testpipeline.RunTraces(t, w, []string{testfixtures.OpenInference}, []ptrace.Traces{td})
	require.NoError(t, w.Shutdown(context.Background()))
	require.Len(t, cases, 1)
	return root, cases[0], requests
}

// postRaw posts body and returns the response body, which must be a 200.
func postRaw(t *testing.T, url string, body []byte) []byte {
	t.Helper()
	resp, err := http.Post(url, "application/json", bytes.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	var out bytes.Buffer
	_, err = out.ReadFrom(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, out.String())
	return out.Bytes()
}

// modelCalls are the indexes, as reprise show numbers them, of the case's first and last LLM
// steps.
func modelCalls(t *testing.T, c *replaycase.Case) (first, last string) {
	t.Helper()
	var idx []int
	for _, st := range c.Steps {
		if st.Kind == replaycase.StepLLM {
			idx = append(idx, st.Index)
		}
	}
	require.Len(t, idx, 2)
	return fmt.Sprint(idx[0]), fmt.Sprint(idx[1])
}

// A case edited by reprise mutate is served through the Anthropic Messages endpoint as the API
// writes it, for the requests the agent sent (the recorded run of @anthropic-ai/sdk, whose
// reasons were tool_use then end_turn): an edited answer is a text block ending in end_turn,
// a tool call edited in for the answer a tool_use block ending in tool_use, a text edited in
// for the first call's tool calls ends the turn, and an answer given Anthropic's max_tokens
// ends there; streamed, the events say the same.
func TestMutatedCaseReplaysThroughAnthropicMessages(t *testing.T) {
	root, orig, requests := nodeRunDataset(t, "anthropic-openinference-create")
	require.Len(t, requests, 2)
	first, last := modelCalls(t, orig)
	answer := mutateOne(t, root, orig.CaseID, "--step", last, "--response", snowText)
	call := mutateOne(t, root, orig.CaseID, "--step", last, "--response",
		`{"role":"assistant","parts":[{"type":"tool_call","id":"toolu_9","name":"get_weather","arguments":"{\"city\":\"Lyon\"}"}]}`)
	noCalls := mutateOne(t, root, orig.CaseID, "--step", first, "--response", snowText)
	cut := mutateOne(t, root, orig.CaseID, "--step", last, "--response", cutText)
	base := startReplay(t, root)

	type block struct {
		Type, Text, ID, Name string
		Input                map[string]any
	}
	for _, tc := range []struct {
		name    string
		c       *replaycase.Case
		request []byte
		stop    string
		content []block
	}{
		{"edited answer", answer, requests[1], "end_turn", []block{{Type: "text", Text: "It is snowing in Paris."}}},
		{"tool call edited in", call, requests[1], "tool_use", []block{{Type: "tool_use", ID: "toolu_9", Name: "get_weather", Input: map[string]any{"city": "Lyon"}}}},
		{"text for the tool calls", noCalls, requests[0], "end_turn", []block{{Type: "text", Text: "It is snowing in Paris."}}},
		{"answer cut at the token limit", cut, requests[1], "max_tokens", []block{{Type: "text", Text: "It is snow"}}},
	} {
		url := fmt.Sprintf("%s/v1/cases/%s/anthropic/v1/messages", base, tc.c.CaseID)
		var msg struct {
			Type, Role string
			StopReason string `json:"stop_reason"`
			Content    []block
		}
		require.NoError(t, json.Unmarshal(postRaw(t, url, tc.request), &msg), tc.name)
		assert.Equal(t, "message", msg.Type, tc.name)
		assert.Equal(t, tc.stop, msg.StopReason, tc.name)
		assert.Equal(t, tc.content, msg.Content, tc.name)

		var streamed map[string]any
		require.NoError(t, json.Unmarshal(tc.request, &streamed))
		streamed["stream"] = true
		body, err := json.Marshal(streamed)
		require.NoError(t, err)
		var stops, starts []string
		for _, data := range sseData(postRaw(t, url, body)) {
			var ev struct {
				Type  string
				Delta struct {
					StopReason string `json:"stop_reason"`
				}
				ContentBlock struct{ Type string } `json:"content_block"`
			}
			require.NoError(t, json.Unmarshal([]byte(data), &ev), tc.name)
			switch ev.Type {
			case "message_delta":
				stops = append(stops, ev.Delta.StopReason)
			case "content_block_start":
				starts = append(starts, ev.ContentBlock.Type)
			}
		}
		assert.Equal(t, []string{tc.stop}, stops, tc.name+" streamed")
		assert.Equal(t, []string{tc.content[0].Type}, starts, tc.name+" streamed")
	}
}

// The same through the Responses endpoint, for the requests of the recorded openai SDK run
// (responses.create: two function_call items, then the answer): an edited answer is a message
// item with its output_text, a tool call edited in a function_call item with its call id, name
// and arguments, each in a completed response, and an answer given Anthropic's max_tokens an
// incomplete one (max_output_tokens); streamed, the last event says the same.
func TestMutatedCaseReplaysThroughResponses(t *testing.T) {
	root, orig, requests := nodeRunDataset(t, "openinference-responses")
	require.Len(t, requests, 2)
	first, last := modelCalls(t, orig)
	answer := mutateOne(t, root, orig.CaseID, "--step", last, "--response", snowText)
	call := mutateOne(t, root, orig.CaseID, "--step", last, "--response", lyonCall)
	noCalls := mutateOne(t, root, orig.CaseID, "--step", first, "--response", snowText)
	cut := mutateOne(t, root, orig.CaseID, "--step", last, "--response", cutText)
	base := startReplay(t, root)

	type item struct {
		Type, Role, Name, Arguments string
		CallID                      string `json:"call_id"`
		Content                     []struct{ Type, Text string }
	}
	type response struct {
		Object, Status    string
		IncompleteDetails *struct{ Reason string } `json:"incomplete_details"`
		Output            []item
	}
	text := func(want string) func(item) {
		return func(it item) {
			assert.Equal(t, "message", it.Type)
			require.Len(t, it.Content, 1)
			assert.Equal(t, "output_text", it.Content[0].Type)
			assert.Equal(t, want, it.Content[0].Text)
		}
	}
	for _, tc := range []struct {
		name    string
		c       *replaycase.Case
		request []byte
		status  string // "incomplete" is for max_output_tokens
		check   func(item)
	}{
		{"edited answer", answer, requests[1], "completed", text("It is snowing in Paris.")},
		{"tool call edited in", call, requests[1], "completed", func(it item) {
			assert.Equal(t, "function_call", it.Type)
			assert.Equal(t, "call_9", it.CallID)
			assert.Equal(t, "get_weather", it.Name)
			assert.JSONEq(t, `{"city":"Lyon"}`, it.Arguments)
		}},
		{"text for the tool calls", noCalls, requests[0], "completed", text("It is snowing in Paris.")},
		{"answer cut at the token limit", cut, requests[1], "incomplete", text("It is snow")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := fmt.Sprintf("%s/v1/cases/%s/openai/v1/responses", base, tc.c.CaseID)
			var r response
			require.NoError(t, json.Unmarshal(postRaw(t, url, tc.request), &r))
			assert.Equal(t, "response", r.Object)
			assert.Equal(t, tc.status, r.Status)
			if tc.status == "incomplete" {
				require.NotNil(t, r.IncompleteDetails)
				assert.Equal(t, "max_output_tokens", r.IncompleteDetails.Reason)
			}
			require.Len(t, r.Output, 1)
			tc.check(r.Output[0])

			var streamed map[string]any
			require.NoError(t, json.Unmarshal(tc.request, &streamed))
			streamed["stream"] = true
			body, err := json.Marshal(streamed)
			require.NoError(t, err)
			var final []response
			for _, data := range sseData(postRaw(t, url, body)) {
				var ev struct {
					Type     string
					Response response
				}
				require.NoError(t, json.Unmarshal([]byte(data), &ev))
				if ev.Type == "response.completed" || ev.Type == "response.incomplete" {
					final = append(final, ev.Response)
				}
			}
			require.Len(t, final, 1, "streamed")
			assert.Equal(t, tc.status, final[0].Status, "streamed")
			require.Len(t, final[0].Output, 1, "streamed")
			tc.check(final[0].Output[0])
		})
	}
}

// sseData lists the data lines of a server-sent event stream.
func sseData(body []byte) []string {
	var out []string
	for _, line := range bytes.Split(body, []byte("\n")) {
		if data, ok := bytes.CutPrefix(line, []byte("data: ")); ok && string(data) != "[DONE]" {
			out = append(out, string(data))
		}
	}
	return out
}
