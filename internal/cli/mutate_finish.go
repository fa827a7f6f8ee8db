package cli

import (
	"github.com/reprise-dev/reprise/normalize"
	"github.com/reprise-dev/reprise/replaycase"
)

// The kinds of output a finish reason can describe. The APIs render an output message from its
// finish reason (wireapi): a tool call ending in "stop" is a Chat Completions answer with
// finish_reason "stop", and a text ending in "refusal" is rendered as a refusal.
const (
	outputText    = "text"
	outputCalls   = "tool calls"
	outputRefusal = "refusal"
)

// setFinishReasons gives each of the step's new output messages its finish reason and returns
// them, in order, as the step's finish_reasons. recorded is the step as recorded. A message's
// reason is:
//   - the one it was given (--response in the message form), normalized;
//   - else the recorded reason of the message in its place when that was the same kind of
//     output: a text that stopped at the token limit or a stop sequence still did;
//   - else what the message now is: tool_call when it calls a tool, else stop.
//
// A normalized reason is spelled as the step's recorded reasons spell it (a row written by
// another tool may hold "tool_calls"), so that the step keeps one vocabulary. Never empty.
func setFinishReasons(recorded *replaycase.Step, msgs []replaycase.Message) []string {
	out := make([]string, len(msgs))
	for i := range msgs {
		m, was := &msgs[i], recordedOutput(recorded, i)
		switch given := normalize.FinishReason(m.FinishReason); {
		case given != "":
			m.FinishReason = spelledAsRecorded(recorded, given)
		case was.FinishReason != "" && outputKind(was) == outputKind(*m):
			m.FinishReason = was.FinishReason
		case outputKind(*m) == outputCalls:
			m.FinishReason = spelledAsRecorded(recorded, "tool_call")
		default:
			m.FinishReason = spelledAsRecorded(recorded, "stop")
		}
		out[i] = m.FinishReason
	}
	return out
}

// recordedOutput is the step's recorded output message i (none: the zero message), with the
// step's i-th finish reason when it has none of its own (some emitters record only
// gen_ai.response.finish_reasons).
func recordedOutput(st *replaycase.Step, i int) replaycase.Message {
	var m replaycase.Message
	if i < len(st.OutputMessages) {
		m = st.OutputMessages[i]
	}
	if m.FinishReason == "" && i < len(st.FinishReasons) {
		m.FinishReason = st.FinishReasons[i]
	}
	return m
}

// outputKind is what a message is, by its parts and its finish reason: a recording without
// content has a reason and no parts.
func outputKind(m replaycase.Message) string {
	kind := outputText
	for _, p := range m.Parts {
		switch p.Type {
		case "tool_call":
			return outputCalls
		case "refusal":
			kind = outputRefusal
		}
	}
	switch normalize.FinishReason(m.FinishReason) {
	case "tool_call":
		return outputCalls
	case "refusal", "content_filter":
		return outputRefusal
	}
	return kind
}

// spelledAsRecorded is the normalized finish reason as the step's recorded reasons spell it,
// else as it is.
func spelledAsRecorded(st *replaycase.Step, reason string) string {
	for _, r := range st.FinishReasons {
		if r != "" && normalize.FinishReason(r) == reason {
			return r
		}
	}
	for _, m := range st.OutputMessages {
		if r := m.FinishReason; r != "" && normalize.FinishReason(r) == reason {
			return r
		}
	}
	return reason
}
