package normalize

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/callsite"
	"github.com/reprise-dev/reprise/replaycase"
)

// editVercelToolResults rewrites the tool-result parts of every ai.prompt.messages that holds
// one, with edit called on each part as decoded.
func editVercelToolResults(t *testing.T, td ptrace.Traces, edit func(part map[string]any)) {
	t.Helper()
	editToolResults(t, td, "ai.prompt.messages", "tool-result", func(msgs any) []any { return msgs.([]any) }, edit)
}

// The AI SDK (v5, v6) records a failed tool result as output {"type": "error-text" | "error-json",
// "value"}, which its Anthropic provider sends as a tool_result with is_error: the recorded run
// (test/node vercel-anthropic-generate, AI SDK 6) with its Paris lookup failed as error-text and
// its Lyon one as error-json gives both results marked, each with its value as the response, and
// an id that covers the marks, so it is not the id of the run as recorded (both successes).
func TestVercelErrorOutputsAreFailedToolResults(t *testing.T) {
	asRecorded, _, _ := Build(recordedRun(t, "node", "vercel-anthropic-generate"))
	td, ld := recordedRun(t, "node", "vercel-anthropic-generate")
	editVercelToolResults(t, td, func(part map[string]any) {
		switch part["toolCallId"] {
		case "toolu_1_0":
			part["output"] = map[string]any{"type": "error-text", "value": "weather service unavailable"}
		case "toolu_1_1":
			part["output"] = map[string]any{"type": "error-json", "value": map[string]any{"code": 503}}
		}
	})
	c, findings, _ := Build(td, ld)
	require.Empty(t, findings)
	st := lastModelCall(t, c)
	assert.Equal(t, []string{"toolu_1_0 is_error", "toolu_1_1 is_error"}, toolResultMarks(st))
	assert.Equal(t, []string{"weather service unavailable", `{"code":503}`}, toolResponses(st))
	require.Contains(t, st.CallSiteFields, callsite.FieldIsError)
	assert.NotEqual(t, lastModelCall(t, asRecorded).CallSiteID, st.CallSiteID)

	succeeded := *st
	succeeded.InputMessages = nil
	for _, m := range st.InputMessages {
		m.Parts = append(m.Parts[:0:0], m.Parts...)
		for i := range m.Parts {
			m.Parts[i].Error = false
		}
		succeeded.InputMessages = append(succeeded.InputMessages, m)
	}
	assert.NotEqual(t, st.CallSiteID, callsite.FromStep(&succeeded).ID(st.CallSiteFields), "the same texts sent as successes")
}

// Before v5 a tool-result was {result, isError?}: isError true is the same failure.
func TestVercelV4IsErrorIsAFailedToolResult(t *testing.T) {
	td, ld := recordedRun(t, "node", "vercel-anthropic-generate")
	editVercelToolResults(t, td, func(part map[string]any) {
		part["result"] = part["output"].(map[string]any)["value"]
		delete(part, "output")
		if part["toolCallId"] == "toolu_1_0" {
			part["isError"] = true
		}
	})
	c, _, _ := Build(td, ld)
	assert.Equal(t, []string{"toolu_1_0 is_error", "toolu_1_1"}, toolResultMarks(lastModelCall(t, c)))
}

// ai.prompt.messages records every result's outcome, so a Vercel model step on the Anthropic
// API covers is_error even when no result failed; one on an OpenAI API does not (that API has
// no mark to send). Its id is the one it had before the mark was read (the mark is in the
// canonical form only when true), for every recorded Vercel run.
func TestVercelRecordingsCoverIsErrorWithTheirIDs(t *testing.T) {
	for run, covers := range map[string]bool{"vercel-anthropic-generate": true, "vercel-anthropic-stream": true, "vercel-openai-generate": false, "vercel-openai-stream": false} {
		c, findings, _ := Build(recordedRun(t, "node", run))
		require.Empty(t, findings, run)
		for i := range c.Steps {
			st := &c.Steps[i]
			if st.CallSiteID == "" {
				continue
			}
			assert.Equal(t, covers, slices.Contains(st.CallSiteFields, callsite.FieldIsError), run)
			without := make([]string, 0, len(st.CallSiteFields))
			for _, f := range st.CallSiteFields {
				if f != callsite.FieldIsError {
					without = append(without, f)
				}
			}
			assert.Equal(t, st.CallSiteID, callsite.FromStep(st).ID(without), run)
		}
	}
	// The ids these runs had before is_error was read (their last model calls).
	for run, id := range map[string]string{
		"vercel-anthropic-generate": "cs_1cb762881b5e97f2a8e04f063a32cbec",
		"vercel-openai-generate":    "cs_74f85fe0afddfee2190f8033280a67e1",
	} {
		c, _, _ := Build(recordedRun(t, "node", run))
		assert.Equal(t, id, lastModelCall(t, c).CallSiteID, run)
	}
}

// The Responses API has no failure mark: the AI SDK's OpenAI provider sends an error-text
// output as its value alone, so the model call keeps no mark and does not cover is_error (the
// replay of a live request, which cannot carry the mark: replayext's
// TestVercelOpenAIFailedToolResultReplays).
func TestVercelOpenAIErrorOutputIsNoMark(t *testing.T) {
	td, ld := recordedRun(t, "node", "vercel-openai-generate")
	editVercelToolResults(t, td, func(part map[string]any) {
		if part["toolCallId"] == "call_1_0" {
			part["output"] = map[string]any{"type": "error-text", "value": "weather service unavailable"}
		}
	})
	c, findings, _ := Build(td, ld)
	require.Empty(t, findings)
	st := lastModelCall(t, c)
	assert.Equal(t, []string{"call_1_0", "call_1_1"}, toolResultMarks(st))
	assert.NotContains(t, st.CallSiteFields, callsite.FieldIsError)
}

// AI SDK 6 records a tool call the approval flow refused as output {"type": "execution-denied",
// "reason"?}; @ai-sdk/anthropic sends it as a tool_result whose content is the reason, or "Tool
// call execution denied." without one, and no is_error. The recorded run with its Paris lookup
// denied with a reason and its Lyon one without gives both results unmarked, each with the text
// sent as the response: the same step, id and all, as the run whose results were those texts.
func TestVercelExecutionDeniedIsTheTextSent(t *testing.T) {
	build := func(paris, lyon map[string]any) *replaycase.Step {
		td, ld := recordedRun(t, "node", "vercel-anthropic-generate")
		editVercelToolResults(t, td, func(part map[string]any) {
			switch part["toolCallId"] {
			case "toolu_1_0":
				part["output"] = paris
			case "toolu_1_1":
				part["output"] = lyon
			}
		})
		c, findings, _ := Build(td, ld)
		require.Empty(t, findings)
		return lastModelCall(t, c)
	}
	denied := build(map[string]any{"type": "execution-denied", "reason": "the user refused the lookup"},
		map[string]any{"type": "execution-denied"})
	assert.Equal(t, []string{"toolu_1_0", "toolu_1_1"}, toolResultMarks(denied))
	assert.Equal(t, []string{"the user refused the lookup", "Tool call execution denied."}, toolResponses(denied))
	assert.Contains(t, denied.CallSiteFields, callsite.FieldIsError, "the prompt records each result's outcome")
	sent := build(map[string]any{"type": "text", "value": "the user refused the lookup"},
		map[string]any{"type": "text", "value": "Tool call execution denied."})
	assert.Equal(t, sent.CallSiteID, denied.CallSiteID)
}

// A call the approval flow refused that carries an OpenAI approvalId (output.providerOptions.openai,
// set by the AI SDK for a provider-executed call: an MCP call the Responses API asked approval
// for) is not sent back by @ai-sdk/openai's Responses provider: the denial went as an
// mcp_approval_response instead. The recorded Responses run with its Paris lookup so denied and
// its Lyon one denied without an id sends Lyon's text alone, and the Paris call stays in the
// assistant turn; with both so denied, the tool message sends nothing and is no message. The
// Anthropic provider reads no approvalId and sends the text. Before, each denial was recorded
// as a result sent.
func TestVercelDenialWithAnOpenAIApprovalIDIsNotSent(t *testing.T) {
	deniedByApproval := map[string]any{"type": "execution-denied", "reason": "the user refused the MCP call",
		"providerOptions": map[string]any{"openai": map[string]any{"approvalId": "mcpr_1"}}}
	build := func(run string, outputs map[string]map[string]any) *replaycase.Step {
		td, ld := recordedRun(t, "node", run)
		editVercelToolResults(t, td, func(part map[string]any) { part["output"] = outputs[part["toolCallId"].(string)] })
		c, findings, _ := Build(td, ld)
		require.Empty(t, findings)
		return lastModelCall(t, c)
	}

	st := build("vercel-openai-generate", map[string]map[string]any{"call_1_0": deniedByApproval, "call_1_1": {"type": "execution-denied"}})
	assert.Equal(t, []string{"call_1_1"}, toolResultMarks(st))
	assert.Equal(t, []string{"Tool call execution denied."}, toolResponses(st))
	assert.Equal(t, []string{"call_1_0", "call_1_1"}, toolCallIDs(st), "the refused call stays in the case")

	st = build("vercel-openai-generate", map[string]map[string]any{"call_1_0": deniedByApproval, "call_1_1": deniedByApproval})
	assert.Empty(t, toolResultMarks(st))
	assert.Equal(t, "assistant", st.InputMessages[len(st.InputMessages)-1].Role, "no tool message left empty")

	st = build("vercel-anthropic-generate", map[string]map[string]any{"toolu_1_0": deniedByApproval, "toolu_1_1": {"type": "execution-denied"}})
	assert.Equal(t, []string{"the user refused the MCP call", "Tool call execution denied."}, toolResponses(st))
}

// toolResponses lists the responses of a step's tool results, in order.
func toolResponses(st *replaycase.Step) []string {
	return inputParts(st, "tool_call_response", func(p replaycase.Part) string { return p.Response })
}

// toolCallIDs lists the ids of the tool calls in a step's input, in order.
func toolCallIDs(st *replaycase.Step) []string {
	return inputParts(st, "tool_call", func(p replaycase.Part) string { return p.ID })
}

// inputParts lists what of each part of type typ in a step's input, in order.
func inputParts(st *replaycase.Step, typ string, what func(replaycase.Part) string) []string {
	var out []string
	for _, m := range st.InputMessages {
		for _, p := range m.Parts {
			if p.Type == typ {
				out = append(out, what(p))
			}
		}
	}
	return out
}
