package normalize

import (
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/reprise-dev/reprise/replaycase"
)

var openLLMetryRequestTypes = map[string]struct {
	kind replaycase.StepKind
	op   string
}{
	"chat":       {replaycase.StepLLM, "chat"},
	"completion": {replaycase.StepLLM, "text_completion"},
	"embedding":  {replaycase.StepEmbedding, "embeddings"},
	"rerank":     {replaycase.StepRetrieval, "rerank"},
}

// vectorDBs are the db.system values of OpenLLMetry's vector-store instrumentations.
var vectorDBs = map[string]bool{"chroma": true, "pinecone": true, "qdrant": true, "weaviate": true, "milvus": true, "lancedb": true, "marqo": true}

// openLLMetry reads OpenLLMetry (Traceloop) legacy attributes: indexed gen_ai.prompt.{i}.* and
// gen_ai.completion.{i}.* messages with their tool calls (also as Koog writes them: a JSON array
// of tool calls in content), llm.request.type, llm.request.functions.{i}.*, llm.usage.*,
// traceloop.span.kind / traceloop.entity.* workflow, agent and tool spans, and vector-store
// spans with db.query.result events. Its current form is OTel semconv >= 1.37 (otel_genai).
func openLLMetry(in *spanInput, b *stepBuilder) bool {
	a := in.Span.Attributes()
	used := false
	st := &b.Step
	if rt, ok := openLLMetryRequestTypes[getStr(a, "llm.request.type")]; ok {
		b.kind(rt.kind, rt.op)
		used = true
	}
	if inputs := indexedMessages(a, "gen_ai.prompt.", b); len(inputs) > 0 {
		b.setInput(inputs)
		used = true
	}
	if outputs := indexedMessages(a, "gen_ai.completion.", b); len(outputs) > 0 {
		b.setOutput(outputs)
		used = true
	}
	if used && st.Kind == "" {
		b.kind(replaycase.StepLLM, "chat")
	}
	if st.ToolDefinitions == nil {
		for _, f := range b.indexedList(a, "llm.request.functions.") {
			d := replaycase.ToolDefinition{Type: "function"}
			if v, ok := f.get("name"); ok {
				d.Name = v.AsString()
			}
			if v, ok := f.get("description"); ok {
				d.Description = v.AsString()
			}
			if v, ok := f.get("parameters"); ok {
				d.Parameters = v.AsString()
			}
			st.ToolDefinitions = append(st.ToolDefinitions, d)
			used = true
		}
	}
	if st.ModelConfig.Stop == nil {
		st.ModelConfig.Stop = getStrings(a, "llm.chat.stop_sequences")
	}
	setStr(&st.ModelConfig.OutputType, b.schemaOutputType(a, "gen_ai.request.structured_output_schema"))
	// The legacy names of gen_ai.request.top_k and the penalties.
	b.setInt(&st.ModelConfig.TopK, a, "llm.top_k")
	b.setFloat(&st.ModelConfig.FrequencyPenalty, a, "llm.frequency_penalty")
	b.setFloat(&st.ModelConfig.PresencePenalty, a, "llm.presence_penalty")
	// The reasoning settings its OpenAI instrumentation records (not semconv attributes).
	setStr(&st.ModelConfig.ReasoningEffort, getStr(a, "gen_ai.request.reasoning_effort"))
	setStr(&st.ModelConfig.ReasoningSummary, getStr(a, "gen_ai.request.reasoning_summary"))
	b.setUsage(&st.Usage.TotalTokens, a, "llm.usage.total_tokens")
	b.setUsage(&st.Usage.ReasoningOutputTokens, a, "llm.usage.reasoning_tokens")
	setStr(&b.ConversationID, getStr(a, "traceloop.association.properties.conversation_id", "traceloop.association.properties.session_id"))

	switch getStr(a, "traceloop.span.kind") {
	case "tool":
		used = true
		b.kind(replaycase.StepTool, "execute_tool")
		tc := b.toolCall()
		setStr(&tc.Name, getStr(a, "traceloop.entity.name"))
		if input, ok := jsonAttr(a, "traceloop.entity.input", b); ok {
			if m, ok := input.(map[string]any); ok && m["kwargs"] != nil {
				setStr(&tc.Arguments, text(m["kwargs"])) // {"args": [...], "kwargs": {...}}
			}
		}
		setStr(&tc.Result, getStr(a, "traceloop.entity.output"))
	case "agent", "workflow":
		used = true
		b.kind(replaycase.StepAgent, "invoke_agent")
		setStr(&st.AgentName, getStr(a, "traceloop.entity.name", "traceloop.workflow.name"))
	}
	if vectorDBs[getStr(a, "db.system")] || getStr(a, "gen_ai.operation.name") == "vector_db_retrieve" {
		used = true
		vectorStoreRetrieval(in, b)
	}
	return used
}

// indexedMessages reads {prefix}{i}.{role, content, tool_call_id, tool_calls.{j}.{id, name,
// arguments}, finish_reason}. Koog writes an assistant's tool calls as a JSON array in content
// (with role "tool" in the prompt) and the results as role "tool" without a tool_call_id: the
// calls become tool_call parts of an assistant message, and each result answers the next call
// that has none yet.
func indexedMessages(a pcommon.Map, prefix string, b *stepBuilder) []replaycase.Message {
	var out []replaycase.Message
	var pending []string // tool call ids without a result yet
	for _, item := range b.indexedList(a, prefix) {
		msg := replaycase.Message{Role: canonicalRole(item.str("role")), FinishReason: FinishReason(item.str("finish_reason"))}
		content := item.str("content")
		contentCalls := toolCallsInContent(content)
		calls := contentCalls
		for _, call := range item.sub("tool_calls.") {
			calls = append(calls, replaycase.Part{Type: "tool_call", ID: call.str("id"), Name: call.str("name"), Arguments: call.str("arguments")})
		}
		switch {
		case len(calls) > 0:
			if msg.Role == "tool" {
				msg.Role = "assistant"
			}
			if contentCalls == nil && content != "" {
				msg.Parts = append(msg.Parts, replaycase.Part{Type: "text", Content: content})
			}
			msg.Parts = append(msg.Parts, calls...)
			for _, c := range calls {
				pending = append(pending, c.ID)
			}
		case msg.Role == "tool":
			id := item.str("tool_call_id")
			if id == "" && len(pending) > 0 {
				id = pending[0]
			}
			pending = removeID(pending, id)
			msg.Parts = append(msg.Parts, replaycase.Part{Type: "tool_call_response", ID: id, Response: content})
		case content != "":
			msg.Parts = append(msg.Parts, replaycase.Part{Type: "text", Content: content})
		}
		if r := item.str("refusal"); r != "" {
			msg.Parts = append(msg.Parts, replaycase.Part{Type: "refusal", Content: r})
		}
		out = append(out, msg)
	}
	return out
}

func removeID(ids []string, id string) []string {
	for i, x := range ids {
		if x == id {
			return append(ids[:i:i], ids[i+1:]...)
		}
	}
	return ids
}

// toolCallsInContent recognises content that is a JSON array of OpenAI tool calls.
func toolCallsInContent(content string) []replaycase.Part {
	s := strings.TrimSpace(content)
	if !strings.HasPrefix(s, "[{") || !strings.Contains(s, `"function"`) {
		return nil
	}
	raw, err := parseJSON(s)
	if err != nil {
		return nil
	}
	return openAIToolCalls(raw)
}

// vectorStoreRetrieval reads an OpenLLMetry vector-store span: one db.query.result (or Milvus
// db.search.result) event per hit, top_k from the store's attribute, the store and collection
// as data source, and the query where the instrumentation records it.
func vectorStoreRetrieval(in *spanInput, b *stepBuilder) {
	a := in.Span.Attributes()
	b.kind(replaycase.StepRetrieval, "retrieval")
	r := b.retrieval()
	source := getStr(a, "db.system")
	if coll := getStr(a, "db.collection.name", "qdrant.search.collection_name", "db.milvus.search.collection_name", "pinecone.query.namespace"); coll != "" {
		source += "/" + coll
	}
	setStr(&r.DataSource, strings.TrimPrefix(source, "/"))
	b.setInt(&r.TopK, a, "db.vector.query.top_k", "pinecone.query.top_k", "db.chroma.query.n_results", "db.milvus.search.limit")
	setStr(&r.Query, getStr(a, "db.marqo.search.query", "pinecone.query.queries"))
	if input, ok := jsonAttr(a, "traceloop.entity.input", b); ok {
		if m, ok := input.(map[string]any); ok {
			setStr(&r.Query, mapStr(m, "query"))
		}
	}
	if r.Documents != nil {
		return
	}
	evs := in.Span.Events()
	for i := 0; i < evs.Len(); i++ {
		ev := evs.At(i)
		prefix := ""
		switch ev.Name() {
		case "db.query.result":
			prefix = "db.query.result."
		case "db.search.result":
			prefix = "db.search.result."
		default:
			continue
		}
		ea := ev.Attributes()
		d := replaycase.Document{ID: getStr(ea, prefix+"id"), Content: getStr(ea, prefix+"document", prefix+"entity")}
		for _, k := range []string{prefix + "score", prefix + "distance"} {
			if v, ok := ea.Get(k); ok {
				d.Score = b.score(ev.Name()+" "+k, v.AsRaw())
				break
			}
		}
		r.Documents = append(r.Documents, d)
	}
}
