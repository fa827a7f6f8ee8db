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

// keepItemIDs gives a step's output parts the item ids of a recorded Responses response body
// (OpenInference's output.value holds the whole response): each function_call item's id to
// the tool call with its call_id, each message item's id to the text of the output message
// at the same place among the messages with text. A part that has an item id keeps it.
func keepItemIDs(msgs []replaycase.Message, body map[string]any) {
	if mapStr(body, "object") != "response" {
		return
	}
	items, _ := body["output"].([]any)
	var messageIDs []string
	callItems := map[string]string{}
	for _, it := range items {
		m, _ := it.(map[string]any)
		switch mapStr(m, "type") {
		case "function_call":
			callItems[mapStr(m, "call_id")] = mapStr(m, "id")
		case "message":
			messageIDs = append(messageIDs, mapStr(m, "id"))
		}
	}
	next := 0
	for i := range msgs {
		withText := false
		for j := range msgs[i].Parts {
			p := &msgs[i].Parts[j]
			switch {
			case p.ItemID != "":
			case p.Type == "tool_call":
				p.ItemID = callItems[p.ID]
			case p.Content != "" && next < len(messageIDs):
				p.ItemID, withText = messageIDs[next], true
			}
		}
		if withText {
			next++
		}
	}
}
