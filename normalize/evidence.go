package normalize

import (
	"fmt"

	"github.com/reprise-dev/reprise/replaycase"
)

// evidence lists what the case lacks to be replayed. The caller's policy decides which of
// these quarantine it.
func evidence(c *replaycase.Case, hasRoot bool) []replaycase.Reason {
	var out []replaycase.Reason
	add := func(code, detail, span string) {
		out = append(out, replaycase.Reason{Code: code, Detail: detail, SpanID: span})
	}
	if !hasRoot {
		add(replaycase.ReasonNoRootSpan, fmt.Sprintf("none of the %d spans received is the trace's root span", c.Provenance.SpanCount), "")
	}
	llm := 0
	for _, st := range c.Steps {
		if st.Kind == replaycase.StepEmbedding {
			if detail := missingEmbeddings(st); detail != "" {
				add(replaycase.ReasonEmbeddingsNotRecorded, fmt.Sprintf("embedding call %q %s", st.Name, detail), st.SpanID)
			}
		}
		if st.Kind != replaycase.StepLLM {
			continue
		}
		llm++
		call := fmt.Sprintf("model call %q", st.Name)
		if !hasContent(st.InputMessages) && len(st.SystemInstructions) == 0 {
			add(replaycase.ReasonNoInputMessages, call+" recorded no input messages (is content capture on in the instrumentation?)", st.SpanID)
		}
		if !hasContent(st.OutputMessages) {
			detail := call + " recorded no output messages"
			switch {
			case hasToolCalls(st.OutputMessages):
				detail = call + " recorded its tool calls without arguments"
			case len(st.OutputMessages) > 0: // e.g. output items the instrumentation does not know, written as empty text
				detail = fmt.Sprintf("%s recorded %d output message(s) with no content", call, len(st.OutputMessages))
			}
			add(replaycase.ReasonNoModelOutput, detail, st.SpanID)
		}
		if st.ModelConfig.RequestModel == "" && st.ModelConfig.ResponseModel == "" {
			add(replaycase.ReasonNoModelName, call+" names no model", st.SpanID)
		}
	}
	out = append(out, lostToolArguments(c)...)
	if llm == 0 {
		add(replaycase.ReasonNoLLMSteps, fmt.Sprintf("no model call among %d spans", c.Provenance.SpanCount), "")
	}
	for _, tc := range c.ToolCalls {
		if tc.Result == "" && tc.Error == "" {
			span := tc.SpanID
			if span == "" {
				span = tc.RequestedBy
			}
			add(replaycase.ReasonToolCallWithoutResult, fmt.Sprintf("tool call %q (id %q) has no recorded result or error", tc.Name, tc.ID), span)
		}
	}
	return out
}

// missingEmbeddings says what an embedding step lacks to be served again: every input's text
// (to match the request) and every vector (the response). "" when nothing is missing.
func missingEmbeddings(st replaycase.Step) string {
	if len(st.Embeddings) == 0 {
		return "recorded neither its input text nor its vectors (OpenInference records them; OTel GenAI semconv does not)"
	}
	for i, e := range st.Embeddings {
		switch {
		case e.Text == "":
			return fmt.Sprintf("recorded no text for input %d", i)
		case len(e.Vector) == 0:
			return fmt.Sprintf("recorded no vector (or one that is not all finite numbers) for input %d", i)
		}
	}
	return ""
}

// hasContent reports whether any message has a part with recorded content.
func hasContent(msgs []replaycase.Message) bool {
	for _, m := range msgs {
		for _, p := range m.Parts {
			if p.Content != "" || p.Arguments != "" || p.Response != "" || p.URI != "" || p.FileID != "" {
				return true
			}
		}
	}
	return false
}

func hasToolCalls(msgs []replaycase.Message) bool {
	for _, m := range msgs {
		for _, p := range m.Parts {
			if p.Type == "tool_call" {
				return true
			}
		}
	}
	return false
}
