package replayext

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/reprise-dev/reprise/casediff"
)

// Finding types one differing path of a divergence with the finding type `reprise diff` uses,
// so that a divergence reads like a diff finding. Paths only: the values stay on the server.
type Finding struct {
	Type casediff.FindingType `json:"type"`
	Path string               `json:"path,omitempty"`
}

// messagePath matches the index of a canonical model request's message: messages[3]….
var messagePath = regexp.MustCompile(`^messages\[(\d+)\]`)

// classifyModelCall types the paths where a model request differs from a recorded one, given
// both in the call-site canonical form: a system, user or developer message is a changed
// prompt, a tool message a changed tool result, an assistant tool call changed arguments,
// anything outside the messages (model, sampling parameters, tool set) the model config.
func classifyModelCall(recorded, requested map[string]any, diffs []Difference) []Finding {
	out := make([]Finding, 0, len(diffs))
	for _, d := range diffs {
		typ := casediff.ModelConfigChanged
		if m := messagePath.FindStringSubmatch(d.Path); m != nil {
			i, _ := strconv.Atoi(m[1])
			switch role := roleAt(recorded, i) + roleAt(requested, i); {
			case strings.Contains(d.Path, ".tool_calls"):
				typ = casediff.ToolArgsChanged
			case strings.Contains(role, "tool"):
				typ = casediff.ToolResultChanged
			default:
				typ = casediff.PromptChanged
			}
		}
		out = append(out, Finding{Type: typ, Path: d.Path})
	}
	return out
}

// roleAt is the role of message i of a canonical request ("" when there is none).
func roleAt(canonical map[string]any, i int) string {
	msgs, _ := canonical["messages"].([]any)
	if i >= len(msgs) {
		return ""
	}
	m, _ := msgs[i].(map[string]any)
	role, _ := m["role"].(string)
	return role
}

// classifyAs types every path with one finding type: tool arguments, retrieval queries.
func classifyAs(typ casediff.FindingType) func(hit, []Difference) []Finding {
	return func(_ hit, diffs []Difference) []Finding {
		out := make([]Finding, len(diffs))
		for i, d := range diffs {
			out[i] = Finding{Type: typ, Path: d.Path}
		}
		return out
	}
}
