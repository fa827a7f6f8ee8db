package normalize

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/reprise-dev/reprise/internal/jsonany"
	"github.com/reprise-dev/reprise/replaycase"
	"github.com/reprise-dev/reprise/wireapi"
)

var openInferenceKinds = map[string]struct {
	kind replaycase.StepKind
	op   string
}{
	"LLM":       {replaycase.StepLLM, "chat"},
	"EMBEDDING": {replaycase.StepEmbedding, "embeddings"},
	"TOOL":      {replaycase.StepTool, "execute_tool"},
	"RETRIEVER": {replaycase.StepRetrieval, "retrieval"},
	"RERANKER":  {replaycase.StepRetrieval, "rerank"},
	"AGENT":     {replaycase.StepAgent, "invoke_agent"},
}

// openInference reads OpenInference spans (openinference.span.kind): LLM messages
// (llm.input_messages / llm.output_messages with content, contents and tool_calls), model and
// invocation parameters, offered tools, token counts, with input.value / output.value (the raw
// request and response) as fallback; TOOL, AGENT, RETRIEVER, RERANKER and EMBEDDING spans; and
// session.id as the conversation.
func openInference(in *spanInput, b *stepBuilder) bool {
	a := in.Span.Attributes()
	spanKind := strings.ToUpper(getStr(a, "openinference.span.kind"))
	if spanKind == "" && !hasPrefix(a, "llm.input_messages.") && !hasPrefix(a, "llm.output_messages.") {
		return false // llm.* alone is also OpenLLMetry's legacy namespace
	}
	if k, ok := openInferenceKinds[spanKind]; ok {
		b.kind(k.kind, k.op)
	}
	setStr(&b.ConversationID, getStr(a, "session.id"))
	switch spanKind {
	case "LLM", "":
		openInferenceLLM(a, b)
	case "EMBEDDING":
		setStr(&b.Step.ModelConfig.RequestModel, getStr(a, "embedding.model_name"))
		setStr(&b.Step.ModelConfig.Provider, canonicalProvider(getStr(a, "llm.system", "llm.provider")))
		if b.Step.Embeddings == nil {
			b.Step.Embeddings = openInferenceEmbeddings(a, b)
		}
	case "TOOL":
		tc := b.toolCall()
		setStr(&tc.Name, getStr(a, "tool.name"))
		setStr(&tc.ID, getStr(a, "tool.id", "tool_call.id"))
		setStr(&tc.Arguments, getStr(a, "input.value"))
		setStr(&tc.Result, getStr(a, "output.value"))
	case "AGENT":
		name := getStr(a, "agent.name", "graph.node.name")
		if name == "" {
			name = in.Span.Name()
		}
		setStr(&b.Step.AgentName, name)
	case "RETRIEVER":
		r := b.retrieval()
		setStr(&r.Query, getStr(a, "input.value"))
		if r.Documents == nil {
			r.Documents = openInferenceDocuments(a, "retrieval.documents.", b)
		}
	case "RERANKER":
		r := b.retrieval()
		setStr(&r.Query, getStr(a, "reranker.query"))
		b.setInt(&r.TopK, a, "reranker.top_k")
		setStr(&b.Step.ModelConfig.RequestModel, getStr(a, "reranker.model_name"))
		if r.Documents == nil {
			r.Documents = openInferenceDocuments(a, "reranker.output_documents.", b)
		}
	}
	return true
}

func openInferenceLLM(a pcommon.Map, b *stepBuilder) {
	st := &b.Step
	mc := &st.ModelConfig
	setStr(&mc.Provider, canonicalProvider(getStr(a, "llm.system", "llm.provider")))
	b.setModel(&mc.RequestModel, &b.offers.requestModel, getStr(a, "llm.request.model_name"), "llm.request.model_name")
	b.setModel(&mc.ResponseModel, &b.offers.responseModel, getStr(a, "llm.response.model_name"), "llm.response.model_name")
	// llm.model_name is not compared: instrumentations write the request's model there, or the
	// response's.
	setStr(&mc.ResponseModel, getStr(a, "llm.model_name"))

	params := openInferenceParams(a, b)
	b.setModel(&mc.RequestModel, &b.offers.requestModel, params.RequestModel, "llm.invocation_parameters model")
	mergeModelConfig(mc, params)
	if st.ToolDefinitions == nil {
		st.ToolDefinitions = openInferenceTools(a, b) // before the request body, which need not read its tools then
	}
	request := openInferenceRequest(a, b, st.ToolDefinitions == nil)
	b.setModel(&mc.RequestModel, &b.offers.requestModel, request.Model.RequestModel, "input.value model")
	mergeModelConfig(mc, request.Model)
	setStr(&mc.RequestModel, getStr(a, "llm.model_name"))

	// For Anthropic the recorded request body comes first: the JS instrumentation (0.2)
	// flattens a user turn with several tool_result blocks into one message that names only
	// the last one, and writes the system prompt only in the body. Only the body keeps a
	// tool_result's is_error. The reasoning settings are read from it too when the parameters
	// lack them: output_config.effort and thinking change the answer.
	if mc.Provider == "anthropic" && getStr(a, "input.mime_type") == "application/json" && len(st.InputMessages) == 0 {
		if r, err := wireapi.ParseMessagesRequest([]byte(getStr(a, "input.value"))); err == nil {
			b.setInput(r.Messages)
			b.toolErrorsRecorded = true
			setStr(&mc.ReasoningEffort, r.Params.ReasoningEffort)
			setStr(&mc.Thinking, r.Params.Thinking)
		}
	}
	b.setInput(openInferenceMessages(a, "llm.input_messages.", b))
	b.setInput(request.Messages)
	var response OpenAIResponse
	var responseBody map[string]any
	if raw, ok := jsonAttr(a, "output.value", b); ok && getStr(a, "output.mime_type") == "application/json" {
		if body, ok := raw.(map[string]any); ok {
			var err error
			if response, err = ParseOpenAIResponse(body); err != nil {
				b.problem("output.value", err)
			}
			responseBody = body
		}
	}
	outputs := openInferenceMessages(a, "llm.output_messages.", b)
	finish := FinishReason(getStr(a, "llm.finish_reason"))
	setStr(&finish, responsesFinishReason(responseBody))
	if finish != "" {
		for i := range outputs {
			setStr(&outputs[i].FinishReason, finish)
		}
		if st.FinishReasons == nil {
			st.FinishReasons = []string{finish}
		}
	}
	b.setOutput(outputs)
	b.setOutput(response.Choices)
	keepItemIDs(st.OutputMessages, responseBody)
	setStr(&st.ResponseID, response.ID)
	if st.FinishReasons == nil {
		st.FinishReasons = response.FinishReasons
	}

	if st.ToolDefinitions == nil {
		st.ToolDefinitions = request.Tools
	}

	u := &st.Usage
	b.setUsage(&u.InputTokens, a, "llm.token_count.prompt")
	b.setUsage(&u.OutputTokens, a, "llm.token_count.completion")
	b.setUsage(&u.TotalTokens, a, "llm.token_count.total")
	b.setUsage(&u.CacheReadInputTokens, a, "llm.token_count.prompt_details.cache_read")
	b.setUsage(&u.CacheWriteInputTokens, a, "llm.token_count.prompt_details.cache_write")
	b.setUsage(&u.ReasoningOutputTokens, a, "llm.token_count.completion_details.reasoning")
	if *u == (replaycase.Usage{}) {
		*u = b.responseUsage(responseBody, "output.value usage")
	} else if mapStr(responseBody, "type") == "message" && u.CacheReadInputTokens == 0 && u.CacheWriteInputTokens == 0 {
		anthropicPromptWithCache(u, b.responseUsage(responseBody, "output.value usage"))
	}
	if *u == (replaycase.Usage{}) {
		*u = response.Usage // Chat Completions
	}
	if len(st.InputMessages) > 0 || len(st.OutputMessages) > 0 {
		b.kind(replaycase.StepLLM, "chat")
	}
}

// openInferenceMessages reads flattened messages: {prefix}{i}.message.{role, content, name,
// tool_call_id, contents.{j}.message_content.{type, text, image.image.url},
// tool_calls.{k}.tool_call.{id, function.name, function.arguments}}.
func openInferenceMessages(a pcommon.Map, prefix string, b *stepBuilder) []replaycase.Message {
	var out []replaycase.Message
	for _, item := range b.indexedList(a, prefix) {
		msg := replaycase.Message{Role: canonicalRole(item.str("message.role")), Name: item.str("message.name")}
		if id := item.str("message.tool_call_id"); id != "" {
			result := item.str("message.content")
			if result == "" {
				result = openInferenceResultParts(item.sub("message.contents."))
			}
			msg.Parts = append(msg.Parts, replaycase.Part{Type: "tool_call_response", ID: id, Response: result})
			out = append(out, msg)
			continue
		}
		if c := item.str("message.content"); c != "" {
			msg.Parts = append(msg.Parts, replaycase.Part{Type: "text", Content: c})
		}
		for _, part := range item.sub("message.contents.") {
			switch t := part.str("message_content.type"); t {
			case "image":
				msg.Parts = append(msg.Parts, replaycase.Part{Type: "uri", Modality: "image", URI: part.str("message_content.image.image.url")})
			case "tool_use":
				// The Anthropic instrumentations (JS 0.2, Python 3.1) write tool_call.{id,
				// function.*} and repeat the call in message.tool_calls, which then adds nothing;
				// message_content.{id, name, input} is the form of earlier Python releases.
				msg.Parts = append(msg.Parts, replaycase.Part{Type: "tool_call",
					ID:        cmp.Or(part.str("message_content.id"), part.str("tool_call.id")),
					Name:      cmp.Or(part.str("message_content.name"), part.str("tool_call.function.name")),
					Arguments: cmp.Or(part.str("message_content.input"), part.str("tool_call.function.arguments"))})
			default:
				if t == "" {
					t = "text"
				}
				msg.Parts = append(msg.Parts, replaycase.Part{Type: t, Content: part.str("message_content.text")})
			}
		}
		for _, call := range item.sub("message.tool_calls.") {
			if id := call.str("tool_call.id"); id != "" && slices.ContainsFunc(msg.Parts, func(p replaycase.Part) bool { return p.Type == "tool_call" && p.ID == id }) {
				continue
			}
			msg.Parts = append(msg.Parts, replaycase.Part{
				Type: "tool_call", ID: call.str("tool_call.id"), Name: call.str("tool_call.function.name"), Arguments: call.str("tool_call.function.arguments"),
			})
		}
		if name, args := item.str("message.function_call_name"), item.str("message.function_call_arguments_json"); name != "" {
			msg.Parts = append(msg.Parts, replaycase.Part{Type: "tool_call", Name: name, Arguments: args})
		}
		out = append(out, msg)
	}
	return out
}

// openInferenceResultParts is a tool result the instrumentation recorded as content parts
// (message.contents, for a tool message whose content is an array of parts): their texts joined
// by a newline, the text call-site id version 2 reads such an array as (callsite.ToolResultText);
// with an image among them, the parts as a Chat Completions content array in compact JSON, so
// nothing recorded is lost.
func openInferenceResultParts(parts []item) string {
	texts := make([]string, 0, len(parts))
	array := make([]any, 0, len(parts))
	allText := true
	for _, part := range parts {
		switch part.str("message_content.type") {
		case "text", "":
			texts = append(texts, part.str("message_content.text"))
			array = append(array, map[string]any{"type": "text", "text": part.str("message_content.text")})
		default: // image: the only other part the instrumentation records
			allText = false
			array = append(array, map[string]any{"type": "image_url", "image_url": map[string]any{"url": part.str("message_content.image.image.url")}})
		}
	}
	if allText {
		return strings.Join(texts, "\n")
	}
	return text(array)
}

func openInferenceDocuments(a pcommon.Map, prefix string, b *stepBuilder) []replaycase.Document {
	var docs []replaycase.Document
	for _, item := range b.indexedList(a, prefix) {
		d := replaycase.Document{}
		if v, ok := item.get("document.id"); ok {
			d.ID = v.AsString()
		}
		if v, ok := item.get("document.content"); ok {
			d.Content = v.AsString()
		}
		if v, ok := item.get("document.score"); ok {
			d.Score = b.score(fmt.Sprintf("%s%d.document.score", prefix, item[0].index), v.AsRaw())
		}
		docs = append(docs, d)
	}
	return docs
}

// openInferenceEmbeddings reads embedding.embeddings.N.embedding.text (the request's input N)
// and embedding.embeddings.N.embedding.vector (the response's vector N, a number array). A
// vector with an element that is not a finite number is left out: the step then lacks it and
// the evidence check says so.
func openInferenceEmbeddings(a pcommon.Map, b *stepBuilder) []replaycase.Embedding {
	var out []replaycase.Embedding
	for _, item := range b.indexedList(a, "embedding.embeddings.") {
		e := replaycase.Embedding{}
		if v, ok := item.get("embedding.text"); ok {
			e.Text = v.AsString()
		}
		if v, ok := item.get("embedding.vector"); ok && v.Type() == pcommon.ValueTypeSlice {
			e.Vector = numbers(v.Slice())
		}
		out = append(out, e)
	}
	return out
}

// numbers is a slice of finite numbers (OTLP exporters write whole numbers as ints), or nil.
func numbers(s pcommon.Slice) []float64 {
	out := make([]float64, s.Len())
	for i := range s.Len() {
		v := s.At(i)
		switch v.Type() {
		case pcommon.ValueTypeDouble:
			out[i] = v.Double()
		case pcommon.ValueTypeInt:
			out[i] = float64(v.Int())
		default:
			return nil
		}
		if math.IsNaN(out[i]) || math.IsInf(out[i], 0) {
			return nil
		}
	}
	return out
}

// invocationParameterFields are the members of llm.invocation_parameters that
// openInferenceLLM reads from its decoded value; openAIParams parses the recorded text itself.
var invocationParameterFields = slices.Concat(responseEchoFields, requestFloatFields, requestIntFields, []string{requestFormatField},
	anthropicOutputFormat.fields, responsesOutputFormat.fields, settingFields)

// invocationParameters returns llm.invocation_parameters when it is a JSON object, as jsonAttr
// decodes it and reports it when it is not JSON. From recorded text only the members
// openInferenceLLM reads are built: the instrumentation records the offered tools there too,
// and their schemas are most of the text.
func invocationParameters(a pcommon.Map, b *stepBuilder) (map[string]any, bool) {
	const key = "llm.invocation_parameters"
	if v, ok := a.Get(key); ok && v.Type() == pcommon.ValueTypeStr {
		if params, ok := jsonany.DecodeFields(jsonText(v.Str()), invocationParameterFields...); ok {
			return params, true
		}
	}
	raw, ok := jsonAttr(a, key, b) // not an object, not JSON, or left to encoding/json
	params, isObject := raw.(map[string]any)
	return params, ok && isObject
}

// openInferenceTools reads the tool definitions recorded as llm.tools.N.tool.json_schema, nil
// when there are none.
func openInferenceTools(a pcommon.Map, b *stepBuilder) []replaycase.ToolDefinition {
	var tools []replaycase.ToolDefinition
	for _, item := range b.indexedList(a, "llm.tools.") {
		if v, ok := item.get("tool.json_schema"); ok {
			tools = append(tools, openInferenceTool(v)...)
		}
	}
	return tools
}

// openInferenceTool reads one llm.tools.N.tool.json_schema through recordedTools: its
// definition, or none when it is not a JSON object.
func openInferenceTool(v pcommon.Value) []replaycase.ToolDefinition {
	read, err := readTools(recordedTools, v, func(raw any) ([]replaycase.ToolDefinition, error) {
		if m, ok := raw.(map[string]any); ok {
			return []replaycase.ToolDefinition{toolDefinition(m)}, nil
		}
		return nil, nil
	})
	if err != nil {
		return nil
	}
	return read.defs
}

// openInferenceRequest reads the Chat Completions request recorded in input.value. Recorded as
// JSON text, the body is parsed once, by the replay endpoint's parser; only a body that parser
// refuses is parsed again into plain values, to report what is wrong with it.
// withTools says whether its tools are needed (parseChatRequest).
func openInferenceRequest(a pcommon.Map, b *stepBuilder, withTools bool) OpenAIRequest {
	jsonBody := getStr(a, "input.mime_type") == "application/json"
	v, found := a.Get("input.value")
	text := found && v.Type() == pcommon.ValueTypeStr
	if jsonBody && text {
		if r, decoded := parseChatRequest([]byte(v.Str()), withTools); decoded {
			return r
		}
	}
	raw, ok := jsonAttr(a, "input.value", b) // text that is not JSON at all is reported whatever its mime type
	body, isObject := raw.(map[string]any)
	if !ok || !jsonBody || !isObject {
		return OpenAIRequest{}
	}
	b.checkRequestNumbers(body, "input.value")
	if text {
		return OpenAIRequest{} // the parser above refused this very text
	}
	return ParseOpenAIRequest(body)
}

// anthropicPromptWithCache corrects u, read from llm.token_count.*, with body, the usage of the
// Anthropic Messages response recorded beside it. OpenInference's JS Anthropic instrumentation
// (0.2.8) writes llm.token_count.prompt = usage.input_tokens, which in Anthropic's terms leaves
// the cached tokens out, and no prompt_details: read as recorded, the cached part of the prompt
// would be neither counted nor priced, and the call would disagree with the Anthropic SDK's own
// span of it (folded by its token counts). Only that pattern is corrected: a prompt count that
// already includes the cache (body.InputTokens) is left alone.
func anthropicPromptWithCache(u *replaycase.Usage, body replaycase.Usage) {
	cached := body.CacheReadInputTokens + body.CacheWriteInputTokens
	if cached <= 0 || body.InputTokens < cached || u.InputTokens != body.InputTokens-cached {
		return
	}
	recordedTotal := u.TotalTokens == u.InputTokens+u.OutputTokens // the instrumentation's sum, not a count of its own
	u.InputTokens, u.CacheReadInputTokens, u.CacheWriteInputTokens = body.InputTokens, body.CacheReadInputTokens, body.CacheWriteInputTokens
	if recordedTotal {
		u.TotalTokens = u.InputTokens + u.OutputTokens
	}
}
