package casediff

import (
	"strings"

	"github.com/reprise-dev/reprise/normalize"
	"github.com/reprise-dev/reprise/replaycase"
)

// The fields of a model call's output that model_output_changed compares, in the order its
// detail names them. Tool-call parts are compared at the tools point, from the tool spans.
var outputFields = []string{"text", "reasoning", "refusal", "finish_reason"}

// outputValue is what a model call answered besides its tool calls: per output message, its
// text, reasoning and refusal, and its finish reason (the message's, else the step's reason in
// its place: some emitters record only gen_ai.response.finish_reasons), normalized so that two
// APIs' spellings of one reason ("tool_calls", "tool_call") are the same. Empty fields are
// absent, so a field recorded on one side only differs; a message with none of them (tool
// calls only) is left out.
func outputValue(st *replaycase.Step) []any {
	var out []any
	for i := range max(len(st.OutputMessages), len(st.FinishReasons)) {
		m := map[string]any{}
		reason := ""
		if i < len(st.FinishReasons) {
			reason = st.FinishReasons[i]
		}
		if i < len(st.OutputMessages) {
			msg := st.OutputMessages[i]
			if msg.FinishReason != "" {
				reason = msg.FinishReason
			}
			for _, p := range msg.Parts {
				field := p.Type
				if field == "" {
					field = "text"
				}
				switch field {
				case "text", "reasoning", "refusal":
					if p.Content != "" {
						s, _ := m[field].(string)
						m[field] = s + p.Content
					}
				}
			}
		}
		if reason != "" {
			m["finish_reason"] = normalize.FinishReason(reason)
		}
		if len(m) > 0 {
			out = append(out, m)
		}
	}
	return out
}

// modelOutputChanged is the model_output_changed finding of two paired model calls, or nil when they
// answered the same. One per call, whatever changed in it: its detail names what did (all a
// message holds, for a message on one side only).
func modelOutputChanged(pa, pb string, a, b *replaycase.Step) []Finding {
	va, vb := outputValue(a), outputValue(b)
	changes := diffValues("", va, vb)
	if len(changes) == 0 {
		return nil
	}
	named := map[string]bool{}
	for _, c := range changes {
		if i := strings.LastIndexByte(c.Path, '.'); i >= 0 {
			named[c.Path[i+1:]] = true
		}
		for _, v := range []any{c.Before, c.After} {
			if m, ok := v.(map[string]any); ok {
				for k := range m {
					named[k] = true
				}
			}
		}
	}
	var changed []string
	for _, field := range outputFields {
		if named[field] {
			changed = append(changed, field)
		}
	}
	return []Finding{{Type: ModelOutputChanged, DecisionPoint: PointModel,
		PathA: pa + ".output_messages", PathB: pb + ".output_messages", Before: va, After: vb,
		Detail: "model output changed: " + strings.Join(changed, ", ")}}
}
