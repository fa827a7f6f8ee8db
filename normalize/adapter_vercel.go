package normalize

import (
	"encoding/json"
	"fmt"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/reprise-dev/reprise/replaycase"
)

// vercelAI reads Vercel AI SDK spans (ai.operationId): the outer ai.generateText /
// ai.streamText / ai.generateObject / ai.streamObject / ai.embed(Many) span is the SDK call
// (an agent-level span named by ai.telemetry.functionId); its .doGenerate / .doStream children
// are the model calls (ai.prompt.messages, ai.prompt.tools, ai.prompt.toolChoice,
// ai.response.*, ai.usage.*, ai.settings.*); .doEmbed children are embeddings; ai.toolCall
// spans are tool executions (ai.toolCall.name/id/args|input/result|output).
func vercelAI(in *spanInput, b *stepBuilder) bool {
	a := in.Span.Attributes()
	op := getStr(a, "ai.operationId")
	if op == "" && strings.HasPrefix(in.Span.Name(), "ai.") {
		op = in.Span.Name()
	}
	if !strings.HasPrefix(op, "ai.") {
		return false
	}
	st := &b.Step
	switch {
	case op == "ai.toolCall":
		b.kind(replaycase.StepTool, "execute_tool")
		tc := b.toolCall()
		setStr(&tc.Name, getStr(a, "ai.toolCall.name"))
		setStr(&tc.ID, getStr(a, "ai.toolCall.id"))
		setStr(&tc.Arguments, getStr(a, "ai.toolCall.args", "ai.toolCall.input"))
		setStr(&tc.Result, getStr(a, "ai.toolCall.result", "ai.toolCall.output"))
		return true
	case strings.HasSuffix(op, ".doEmbed"):
		b.kind(replaycase.StepEmbedding, "embeddings")
		if st.Embeddings == nil {
			st.Embeddings = vercelEmbeddings(a)
		}
	case strings.HasSuffix(op, ".doGenerate"), strings.HasSuffix(op, ".doStream"):
		b.kind(replaycase.StepLLM, "chat")
		if raw, ok := jsonAttr(a, "ai.prompt.messages", b); ok {
			// Asked only of a refusal with an approvalId (normalize sets the step's API after
			// the adapters, from the same attributes).
			responses := func() bool { return modelAPI(in.Span.Name(), a, st) == replaycase.APIOpenAIResponses }
			msgs, err := vercelMessages(raw, responses)
			if err != nil {
				b.problem("ai.prompt.messages", err)
			}
			// The prompt records every tool result's outcome (its output type, or isError
			// before v5): a result not marked as a failure was sent as a success.
			b.toolErrorsRecorded = b.toolErrorsRecorded || (len(st.InputMessages) == 0 && len(msgs) > 0)
			b.setInput(msgs)
		}
		if v, ok := a.Get("ai.prompt.tools"); ok && st.ToolDefinitions == nil {
			raw, err := decodeToolJSON(v)
			if err == nil {
				st.ToolDefinitions, err = toolDefinitions(raw)
			}
			if err != nil {
				b.problem("ai.prompt.tools", err)
			}
		}
		if raw, ok := jsonAttr(a, "ai.prompt.toolChoice", b); ok {
			setStr(&st.ModelConfig.ToolChoice, vercelToolChoice(raw, getStr(a, "ai.model.provider")))
		}
	default: // the SDK call that wraps model calls and tool executions
		b.kind(replaycase.StepAgent, "invoke_agent")
		setStr(&st.AgentName, getStr(a, "ai.telemetry.functionId"))
		// generateObject / streamObject record their schema here, not on the model call.
		b.callsOutputType = b.schemaOutputType(a, "ai.schema")
		if raw, ok := jsonAttr(a, "ai.prompt", b); ok {
			if m, ok := raw.(map[string]any); ok {
				msgs := vercelPrompt(m)
				b.setInput(msgs)
			}
		}
	}
	mc := &st.ModelConfig
	setStr(&mc.Provider, canonicalProvider(getStr(a, "ai.model.provider")))
	b.setModel(&mc.RequestModel, &b.offers.requestModel, getStr(a, "ai.model.id"), "ai.model.id")
	b.setModel(&mc.ResponseModel, &b.offers.responseModel, getStr(a, "ai.response.model"), "ai.response.model")
	b.setFloat(&mc.Temperature, a, "ai.settings.temperature")
	b.setFloat(&mc.TopP, a, "ai.settings.topP")
	b.setInt(&mc.MaxTokens, a, "ai.settings.maxOutputTokens", "ai.settings.maxTokens")
	b.setInt(&mc.Seed, a, "ai.settings.seed")
	b.setInt(&mc.TopK, a, "ai.settings.topK")
	b.setFloat(&mc.FrequencyPenalty, a, "ai.settings.frequencyPenalty")
	b.setFloat(&mc.PresencePenalty, a, "ai.settings.presencePenalty")
	if mc.Stop == nil {
		mc.Stop = getStrings(a, "ai.settings.stopSequences")
	}
	setStr(&st.ResponseID, getStr(a, "ai.response.id"))
	if out := vercelOutput(a, b); out != nil {
		b.setOutput([]replaycase.Message{*out})
		if st.FinishReasons == nil && out.FinishReason != "" {
			st.FinishReasons = []string{out.FinishReason}
		}
	}
	u := &st.Usage
	b.setUsage(&u.InputTokens, a, "ai.usage.inputTokens", "ai.usage.promptTokens", "ai.usage.tokens")
	b.setUsage(&u.OutputTokens, a, "ai.usage.outputTokens", "ai.usage.completionTokens")
	b.setUsage(&u.TotalTokens, a, "ai.usage.totalTokens")
	b.setUsage(&u.ReasoningOutputTokens, a, "ai.usage.reasoningTokens", "ai.usage.outputTokenDetails.reasoningTokens")
	b.setUsage(&u.CacheReadInputTokens, a, "ai.usage.cachedInputTokens", "ai.usage.inputTokenDetails.cacheReadTokens")
	// v6 counts cache writes in ai.usage.inputTokens (the total, cache included) and names them
	// only here: unread, they would be priced as plain input.
	b.setUsage(&u.CacheWriteInputTokens, a, "ai.usage.inputTokenDetails.cacheWriteTokens")
	return true
}

// vercelOutput builds the output message from ai.response.text / toolCalls / object and
// ai.response.finishReason (pre-v4: ai.result.* and ai.finishReason).
func vercelOutput(a pcommon.Map, b *stepBuilder) *replaycase.Message {
	msg := replaycase.Message{Role: "assistant", FinishReason: FinishReason(getStr(a, "ai.response.finishReason", "ai.finishReason"))}
	if s := getStr(a, "ai.response.text", "ai.result.text"); s != "" {
		msg.Parts = append(msg.Parts, replaycase.Part{Type: "text", Content: s})
	}
	if s := getStr(a, "ai.response.object", "ai.result.object"); s != "" {
		msg.Parts = append(msg.Parts, replaycase.Part{Type: "text", Content: s})
	}
	for _, key := range []string{"ai.response.toolCalls", "ai.result.toolCalls"} {
		if raw, ok := jsonAttr(a, key, b); ok {
			list, _ := raw.([]any)
			for _, item := range list {
				if m, ok := item.(map[string]any); ok {
					msg.Parts = append(msg.Parts, vercelToolCall(m))
				}
			}
			break
		}
	}
	if len(msg.Parts) == 0 {
		return nil
	}
	return &msg
}

func vercelToolCall(m map[string]any) replaycase.Part {
	args := m["input"]
	if args == nil {
		args = m["args"]
	}
	return replaycase.Part{Type: "tool_call", ID: mapStr(m, "toolCallId"), Name: mapStr(m, "toolName"), Arguments: text(args)}
}

// vercelMessages reads ai.prompt.messages: [{role, content}] where content is a string or a
// list of parts {type: text|tool-call|tool-result|image|file, …}. For a call to the OpenAI
// Responses API (responses, nil for none), a result its provider does not send
// (vercelDeniedByApproval) is left out, and so is a message left with nothing sent.
func vercelMessages(raw any, responses func() bool) ([]replaycase.Message, error) {
	list, ok := raw.([]any)
	if !ok {
		return nil, errNotArray(raw)
	}
	out := make([]replaycase.Message, 0, len(list))
	skipped := 0 // messages and parts that are no JSON object: nothing says what they held
	for _, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			skipped++
			continue
		}
		msg := replaycase.Message{Role: canonicalRole(mapStr(m, "role"))}
		unsent := false
		switch c := m["content"].(type) {
		case string:
			msg.Parts = append(msg.Parts, replaycase.Part{Type: "text", Content: c})
		case []any:
			for _, p := range c {
				pm, ok := p.(map[string]any)
				if !ok {
					skipped++
					continue
				}
				switch mapStr(pm, "type") {
				case "text", "reasoning":
					msg.Parts = append(msg.Parts, replaycase.Part{Type: mapStr(pm, "type"), Content: mapStr(pm, "text")})
				case "tool-call":
					msg.Parts = append(msg.Parts, vercelToolCall(pm))
				case "tool-result":
					if responses != nil && vercelDeniedByApproval(pm) && responses() {
						unsent = true
						continue
					}
					msg.Parts = append(msg.Parts, vercelToolResult(pm))
				case "image", "file":
					msg.Parts = append(msg.Parts, vercelFile(pm))
				default:
					msg.Parts = append(msg.Parts, replaycase.Part{Type: mapStr(pm, "type"), Content: text(pm)})
				}
			}
		}
		if unsent && len(msg.Parts) == 0 {
			continue
		}
		out = append(out, msg)
	}
	if skipped > 0 {
		// What was read is kept; the error makes the step say that the prompt lacks the rest.
		return out, fmt.Errorf("%d message(s) or part(s) are not a JSON object and are left out", skipped)
	}
	return out, nil
}

// vercelDeniedByApproval reports whether a tool-result part is a call the approval flow refused
// that carries an OpenAI approvalId (output.providerOptions.openai.approvalId, which the AI SDK
// sets for a provider-executed call: an MCP call the Responses API asked approval for).
// @ai-sdk/openai's Responses provider does not send such a result: the refusal reached the
// model as an mcp_approval_response. Its Chat Completions provider and @ai-sdk/anthropic read
// no approvalId and send the text (vercelToolResult).
func vercelDeniedByApproval(pm map[string]any) bool {
	o, _ := pm["output"].(map[string]any)
	options, _ := o["providerOptions"].(map[string]any)
	openai, _ := options["openai"].(map[string]any)
	id, _ := openai["approvalId"].(string)
	return mapStr(o, "type") == "execution-denied" && id != ""
}

// vercelDeniedResult is the text the AI SDK's provider packages (@ai-sdk/anthropic, and
// @ai-sdk/openai for Chat Completions and Responses) send as the result of a tool call the
// approval flow refused (an execution-denied output) when it records no reason.
const vercelDeniedResult = "Tool call execution denied."

// vercelToolResult reads a tool-result part: v5+ {output: {type, value}}, where type is "text"
// or "json" for a success and "error-text" or "error-json" for a failure (the provider package
// sends that as Anthropic's is_error); before v5 {result, isError?}. The value is the response.
// A refused call (v6 {output: {type: "execution-denied", reason?}}) is sent as its reason, or
// vercelDeniedResult, with no is_error: it is a result the model read, not a failure mark
// (one the Responses provider does not send is left out before: vercelDeniedByApproval).
func vercelToolResult(pm map[string]any) replaycase.Part {
	result := pm["output"]
	if result == nil {
		result = pm["result"]
	}
	failed := pm["isError"] == true
	if o, ok := result.(map[string]any); ok && o["value"] != nil && len(o) <= 2 {
		switch mapStr(o, "type") {
		case "error-text", "error-json":
			failed = true
		}
		result = o["value"]
	} else if ok && pm["output"] != nil && mapStr(o, "type") == "execution-denied" {
		result = vercelDeniedResult
		if reason, ok := o["reason"].(string); ok {
			result = reason
		}
	}
	return replaycase.Part{Type: "tool_call_response", ID: mapStr(pm, "toolCallId"), Name: mapStr(pm, "toolName"), Response: text(result), Error: failed}
}

// vercelPrompt reads the outer span's ai.prompt: {"prompt": "…"} or {"system", "messages"}.
func vercelPrompt(m map[string]any) []replaycase.Message {
	var msgs []replaycase.Message
	if s := mapStr(m, "system"); s != "" {
		msgs = append(msgs, replaycase.Message{Role: "system", Parts: []replaycase.Part{{Type: "text", Content: s}}})
	}
	if p, ok := m["prompt"].(string); ok {
		msgs = append(msgs, replaycase.Message{Role: "user", Parts: []replaycase.Part{{Type: "text", Content: p}}})
	}
	if list, ok := m["messages"]; ok {
		more, _ := vercelMessages(list, nil) // the agent's own input, whatever model it goes to
		msgs = append(msgs, more...)
	}
	return msgs
}

// vercelEmbeddings pairs ai.values (each input, JSON-encoded) with ai.embeddings (each vector,
// a JSON number array), the two lists a .doEmbed span records when inputs and outputs are
// recorded. An input that is not a JSON string, or a vector that is not all finite numbers, is
// left empty: the step then lacks it and the evidence check says so.
func vercelEmbeddings(a pcommon.Map) []replaycase.Embedding {
	values, vectors := getStrings(a, "ai.values"), getStrings(a, "ai.embeddings")
	out := make([]replaycase.Embedding, max(len(values), len(vectors)))
	for i := range out {
		if i < len(values) {
			_ = json.Unmarshal([]byte(values[i]), &out[i].Text)
		}
		if i < len(vectors) {
			var v []float64 // encoding/json refuses NaN and Inf, which JSON cannot spell
			if json.Unmarshal([]byte(vectors[i]), &v) == nil {
				out[i].Vector = v
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// vercelToolChoice is the tool_choice the provider package sends for the AI SDK's own
// ai.prompt.toolChoice ({"type": "auto" | "none" | "required"} or {"type": "tool", "toolName"}):
// Anthropic's objects ({"type":"auto"}, "required" → {"type":"any"}, {"type":"tool","name"}),
// else OpenAI's ("auto", "none", "required"; a named tool stays as recorded).
func vercelToolChoice(raw any, provider string) string {
	m, ok := raw.(map[string]any)
	if !ok {
		return text(raw)
	}
	kind := mapStr(m, "type")
	if strings.HasPrefix(provider, "anthropic") {
		switch kind {
		case "auto":
			return `{"type":"auto"}`
		case "required":
			return `{"type":"any"}`
		case "tool":
			return text(map[string]any{"type": "tool", "name": m["toolName"]})
		}
		return text(raw)
	}
	if len(m) == 1 && kind != "" {
		return kind // {"type":"auto"} → auto
	}
	return text(raw)
}

// vercelFile reads an image or file part of ai.prompt.messages. The AI SDK records data sent
// inline as its base64 text, which has no colon, and a URL as the URL: the first is a blob, as
// @ai-sdk/anthropic sends it (a base64 source), the second a uri part.
func vercelFile(pm map[string]any) replaycase.Part {
	data, mime := mapStr(pm, "image", "data", "url"), mapStr(pm, "mediaType", "mimeType")
	if data != "" && !strings.Contains(data, ":") {
		return replaycase.Part{Type: "blob", MimeType: mime, Content: data}
	}
	return replaycase.Part{Type: "uri", MimeType: mime, URI: data}
}
