package normalize

import "github.com/reprise-dev/reprise/replaycase"

// responsesItems splits each assistant message of a Responses step's input into the items the
// Responses API carries: its text, then one function_call item per tool call, each its own
// message (an assistant text that is empty is no item), as the replay reads a live request and as the official OTel and OpenInference
// instrumentations record them. The Vercel AI SDK records an assistant turn as one message
// with every call; split, the recorded request and the replayed one compare equal.
func responsesItems(msgs []replaycase.Message) []replaycase.Message {
	out := make([]replaycase.Message, 0, len(msgs))
	for _, m := range msgs {
		calls := 0
		for _, p := range m.Parts {
			if p.Type == "tool_call" {
				calls++
			}
		}
		if m.Role != "assistant" || calls == 0 || (calls == 1 && len(m.Parts) == 1) {
			out = append(out, m)
			continue
		}
		rest := replaycase.Message{Role: m.Role, Name: m.Name}
		var split []replaycase.Message
		for _, p := range m.Parts {
			if p.Type == "tool_call" {
				split = append(split, replaycase.Message{Role: m.Role, Name: m.Name, Parts: []replaycase.Part{p}})
			} else {
				rest.Parts = append(rest.Parts, p)
			}
		}
		if hasContent([]replaycase.Message{rest}) {
			out = append(out, rest)
		}
		out = append(out, split...)
	}
	return out
}
