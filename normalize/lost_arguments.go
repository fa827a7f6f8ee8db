package normalize

import (
	"fmt"
	"strings"

	"github.com/reprise-dev/reprise/replaycase"
)

// lostToolArguments finds tool calls a model step recorded with empty arguments ({}) while the same trace shows the call made with arguments: the tool's execution, or
// the call echoed back in a later model request. Some instrumentations record a streamed
// tool call from its start event only (OpenLLMetry's Anthropic instrumentation with
// messages.stream): replaying {} would send the agent a call it never got, so the case is
// quarantined, naming the call and what the trace shows.
func lostToolArguments(c *replaycase.Case) []replaycase.Reason {
	shown := map[string]string{} // call id → arguments seen elsewhere in the trace
	note := func(id, args string) {
		if id != "" && !emptyArguments(args) && shown[id] == "" {
			shown[id] = args
		}
	}
	for _, st := range c.Steps {
		if st.ToolCall != nil {
			note(st.ToolCall.ID, st.ToolCall.Arguments)
		}
		for _, m := range st.InputMessages {
			for _, p := range m.Parts {
				if p.Type == "tool_call" {
					note(p.ID, p.Arguments)
				}
			}
		}
	}
	var out []replaycase.Reason
	for _, st := range c.Steps {
		if st.Kind != replaycase.StepLLM {
			continue
		}
		for _, m := range st.OutputMessages {
			for _, p := range m.Parts {
				// Arguments not recorded at all are reported by the evidence check already.
				if p.Type == "tool_call" && strings.TrimSpace(p.Arguments) == "{}" && shown[p.ID] != "" {
					out = append(out, replaycase.Reason{Code: replaycase.ReasonNoModelOutput, SpanID: st.SpanID,
						Detail: fmt.Sprintf("model call %q recorded tool call %q with arguments {}, but the trace shows it made with %s (arguments lost, as when a stream is recorded from its start events only)", st.Name, p.ID, shown[p.ID])})
				}
			}
		}
	}
	return out
}

func emptyArguments(args string) bool {
	a := strings.TrimSpace(args)
	return a == "" || a == "{}"
}
