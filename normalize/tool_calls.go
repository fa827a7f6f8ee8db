package normalize

import (
	"github.com/reprise-dev/reprise/replaycase"
)

// toolCalls joins the tool calls the model requested (tool_call parts in LLM outputs) with
// their executions (tool steps) and with results sent back to the model (tool_call_response
// parts in later LLM inputs), by call id, or by name and order when an id is missing.
func toolCalls(steps []replaycase.Step) []replaycase.ToolCall {
	var calls []replaycase.ToolCall
	// find returns the call with this id, else (when one side has no id) the first call of
	// that name not executed yet.
	find := func(id, name string) int {
		for i := range calls {
			if id != "" && calls[i].ID == id {
				return i
			}
		}
		for i := range calls {
			if (id == "" || calls[i].ID == "") && name != "" && calls[i].Name == name && calls[i].SpanID == "" {
				return i
			}
		}
		return -1
	}
	for _, st := range steps {
		switch st.Kind {
		case replaycase.StepLLM:
			for _, m := range st.InputMessages {
				for _, p := range m.Parts {
					if p.Type != "tool_call_response" || p.ID == "" {
						continue // look a call up only for a tool result that names it
					}
					if i := find(p.ID, ""); i >= 0 {
						setStr(&calls[i].Result, p.Response)
					}
				}
			}
			for _, m := range st.OutputMessages {
				for _, p := range m.Parts {
					if p.Type != "tool_call" {
						continue
					}
					if i := find(p.ID, p.Name); i >= 0 {
						setStr(&calls[i].Name, p.Name)
						setStr(&calls[i].Arguments, p.Arguments)
						setStr(&calls[i].RequestedBy, st.SpanID)
					} else {
						calls = append(calls, replaycase.ToolCall{ID: p.ID, Name: p.Name, Arguments: p.Arguments, RequestedBy: st.SpanID})
					}
				}
			}
		case replaycase.StepTool:
			tc := st.ToolCall
			if tc == nil {
				tc = &replaycase.ToolCall{SpanID: st.SpanID}
			}
			if i := find(tc.ID, tc.Name); i >= 0 {
				c := &calls[i]
				setStr(&c.ID, tc.ID)
				setStr(&c.Arguments, tc.Arguments)
				c.SpanID = st.SpanID
				if tc.Result != "" {
					c.Result = tc.Result
				}
				setStr(&c.Error, tc.Error)
			} else {
				calls = append(calls, *tc)
			}
		}
	}
	return calls
}
