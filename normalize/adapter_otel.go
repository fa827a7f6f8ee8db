package normalize

import (
	"fmt"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/replaycase"
	"github.com/reprise-dev/reprise/wireapi"
)

// otelAttributes reads OTel GenAI semconv span attributes: the attributes every version shares
// (operation, model, parameters, usage, agent, tool, retrieval) and the >= 1.37 content
// attributes gen_ai.input.messages, gen_ai.output.messages, gen_ai.system_instructions and
// gen_ai.tool.definitions, written as JSON strings or as structured values.
func otelAttributes(in *spanInput, b *stepBuilder) bool {
	a := in.Span.Attributes()
	if !hasPrefix(a, "gen_ai.") {
		return false
	}
	readSemconvAttributes(a, b, "")
	st := &b.Step
	if name, ok := strings.CutPrefix(in.Span.Name(), "invoke_agent "); ok && st.Kind == replaycase.StepAgent {
		setStr(&st.AgentName, name)
	}
	switch st.Operation {
	case "invoke_agent":
		// semconv splits agent spans by kind: CLIENT calls a remote agent service, INTERNAL
		// runs the agent in process.
		switch in.Span.Kind() {
		case ptrace.SpanKindClient:
			st.AgentInvocation = "client"
		case ptrace.SpanKindInternal:
			st.AgentInvocation = "internal"
		}
	case "invoke_workflow":
		setStr(&st.WorkflowName, getStr(a, "gen_ai.workflow.name"))
		if name, ok := strings.CutPrefix(in.Span.Name(), "invoke_workflow "); ok {
			setStr(&st.WorkflowName, name)
		}
	}
	return true
}

// readSemconvAttributes reads semconv attributes from a map: span attributes, or the body of a
// gen_ai.client.inference.operation.details event. where prefixes problem details.
func readSemconvAttributes(a pcommon.Map, b *stepBuilder, where string) {
	st := &b.Step
	op := getStr(a, "gen_ai.operation.name")
	if k := kindForOperation(op); k != "" {
		b.kind(k, op)
	}

	mc := &st.ModelConfig
	setStr(&mc.Provider, canonicalProvider(getStr(a, "gen_ai.provider.name", "gen_ai.system")))
	b.setModel(&mc.RequestModel, &b.offers.requestModel, getStr(a, "gen_ai.request.model"), "gen_ai.request.model")
	b.setModel(&mc.ResponseModel, &b.offers.responseModel, getStr(a, "gen_ai.response.model"), "gen_ai.response.model")
	b.setFloat(&mc.Temperature, a, "gen_ai.request.temperature")
	b.setFloat(&mc.TopP, a, "gen_ai.request.top_p")
	b.setInt(&mc.MaxTokens, a, "gen_ai.request.max_tokens")
	b.setInt(&mc.Seed, a, "gen_ai.request.seed", "gen_ai.openai.request.seed")
	if mc.Stop == nil {
		mc.Stop = getStrings(a, "gen_ai.request.stop_sequences")
	}
	setStr(&mc.ToolChoice, getStr(a, "gen_ai.request.tool_choice"))
	if op != "retrieval" { // a retrieval's gen_ai.request.top_k (semconv 1.40–1.41) counts documents
		b.setInt(&mc.TopK, a, "gen_ai.request.top_k")
	}
	b.setFloat(&mc.FrequencyPenalty, a, "gen_ai.request.frequency_penalty")
	b.setFloat(&mc.PresencePenalty, a, "gen_ai.request.presence_penalty")
	b.setInt(&mc.ChoiceCount, a, "gen_ai.request.choice.count")
	setStr(&mc.OutputType, getStr(a, "gen_ai.output.type"))
	setStr(&mc.OutputType, wireapi.OutputType(getStr(a, "gen_ai.openai.request.response_format")))
	setStr(&st.ResponseID, getStr(a, "gen_ai.response.id"))
	if st.FinishReasons == nil {
		for _, f := range getStrings(a, "gen_ai.response.finish_reasons") {
			st.FinishReasons = append(st.FinishReasons, FinishReason(f))
		}
	}

	u := &st.Usage
	b.setUsage(&u.InputTokens, a, "gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens")
	b.setUsage(&u.OutputTokens, a, "gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens")
	b.setUsage(&u.CacheReadInputTokens, a, "gen_ai.usage.cache_read.input_tokens", "gen_ai.usage.cache_read_input_tokens")
	b.setUsage(&u.CacheWriteInputTokens, a, "gen_ai.usage.cache_write.input_tokens", "gen_ai.usage.cache_creation.input_tokens", "gen_ai.usage.cache_creation_input_tokens", "gen_ai.usage.cache_write_input_tokens")
	b.setUsage(&u.ReasoningOutputTokens, a, "gen_ai.usage.reasoning.output_tokens", "gen_ai.usage.reasoning_tokens")
	b.setUsage(&u.TotalTokens, a, "gen_ai.usage.total_tokens")

	setStr(&st.AgentName, getStr(a, "gen_ai.agent.name"))
	setStr(&b.ConversationID, getStr(a, "gen_ai.conversation.id"))

	readContent(a, b, where)

	if op == "execute_tool" || getStr(a, "gen_ai.tool.call.id") != "" {
		b.kind(replaycase.StepTool, "execute_tool") // Koog's tool spans carry no operation name
		tc := b.toolCall()
		setStr(&tc.Name, getStr(a, "gen_ai.tool.name"))
		setStr(&tc.ID, getStr(a, "gen_ai.tool.call.id"))
		for _, k := range []string{"gen_ai.tool.call.arguments", "input.value", "tool_arguments", "gcp.vertex.agent.tool_call_args"} {
			if v, ok := a.Get(k); ok {
				setStr(&tc.Arguments, text(v.AsRaw()))
			}
		}
		for _, k := range []string{"gen_ai.tool.call.result", "output.value", "tool_response", "gcp.vertex.agent.tool_response"} {
			if v, ok := a.Get(k); ok {
				setStr(&tc.Result, text(v.AsRaw()))
			}
		}
	}

	if op == "retrieval" {
		r := b.retrieval()
		setStr(&r.DataSource, getStr(a, "gen_ai.data_source.id"))
		setStr(&r.Query, getStr(a, "gen_ai.retrieval.query.text"))
		b.setInt(&r.TopK, a, "gen_ai.retrieval.top_k", "gen_ai.request.top_k")
		if v, ok := a.Get("gen_ai.retrieval.documents"); ok && r.Documents == nil {
			docs, err := retrievalDocuments(v, b)
			if err != nil {
				b.problem(where+"gen_ai.retrieval.documents", err)
			}
			r.Documents = docs
		}
	}
}

// readContent reads the >= 1.37 content attributes and notes content that was uploaded elsewhere.
func readContent(a pcommon.Map, b *stepBuilder, where string) {
	st := &b.Step
	parseWith := func(key string, decode func(pcommon.Value) (any, error), into func(any) error) {
		v, ok := a.Get(key)
		if !ok {
			if ref := getStr(a, key+"_ref"); ref != "" {
				b.Findings = append(b.Findings, replaycase.Reason{Code: replaycase.ReasonContentRef, Detail: fmt.Sprintf("%s%s_ref: %s", where, key, ref), SpanID: b.spanID})
			}
			return
		}
		raw, err := decode(v)
		if err == nil {
			err = into(raw)
		}
		if err != nil {
			b.problem(where+key, err)
		}
	}
	parse := func(key string, into func(any) error) {
		parseWith(key, func(v pcommon.Value) (any, error) { return decodeAny(v, true) }, into)
	}
	if plain := plainInstructions(a); plain != "" && st.SystemInstructions == nil {
		st.SystemInstructions = []replaycase.Part{{Type: "text", Content: plain}}
		b.plainSystem = plain
	} else if plain == "" {
		parse("gen_ai.system_instructions", func(raw any) (err error) {
			if st.SystemInstructions == nil {
				st.SystemInstructions, err = semconvParts(raw)
			}
			return err
		})
	}
	parse("gen_ai.input.messages", func(raw any) error {
		msgs, err := semconvMessages(raw)
		b.setInput(msgs)
		return err
	})
	parse("gen_ai.output.messages", func(raw any) error {
		msgs, err := semconvMessages(raw)
		b.setOutput(msgs)
		return err
	})
	parseWith("gen_ai.tool.definitions", readToolDefinitions, func(raw any) error {
		read := raw.(toolsRead)
		if st.ToolDefinitions == nil {
			st.ToolDefinitions = read.defs
		}
		return read.err
	})
	if b.Step.Kind == "" && (len(st.InputMessages) > 0 || len(st.OutputMessages) > 0) {
		b.kind(replaycase.StepLLM, "chat")
	}
}

// retrievalDocuments reads gen_ai.retrieval.documents: [{id, score, content?, …}].
func retrievalDocuments(v pcommon.Value, b *stepBuilder) ([]replaycase.Document, error) {
	raw, err := decodeAny(v, true)
	if err != nil {
		return nil, err
	}
	list, ok := raw.([]any)
	if !ok {
		return nil, fmt.Errorf("want an array, got %T", raw)
	}
	docs := make([]replaycase.Document, 0, len(list))
	for i, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			return docs, fmt.Errorf("document %d: want an object, got %T", i, item)
		}
		d := replaycase.Document{ID: mapStr(m, "id"), Content: mapStr(m, "content", "text")}
		d.Score = b.score(fmt.Sprintf("gen_ai.retrieval.documents[%d].score", i), m["score"])
		docs = append(docs, d)
	}
	return docs, nil
}

// plainInstructions is gen_ai.system_instructions when an instrumentation recorded it as the
// plain instructions text instead of a JSON parts array (the official OTel JS OpenAI
// instrumentation does for the Responses API's instructions); "" otherwise. Text that looks
// like JSON is left to the parts parser, so malformed JSON is still reported.
func plainInstructions(a pcommon.Map) string {
	v, ok := a.Get("gen_ai.system_instructions")
	if !ok || v.Type() != pcommon.ValueTypeStr {
		return ""
	}
	s := strings.TrimSpace(v.Str())
	if s == "" || strings.ContainsRune("[{\"", rune(s[0])) {
		return ""
	}
	return v.Str()
}

// startsWithSystem reports input messages that already begin with the system message text:
// the same instrumentation also records the instructions there, and keeping both would ask
// the model for them twice.
func startsWithSystem(msgs []replaycase.Message, text string) bool {
	if len(msgs) == 0 || msgs[0].Role != "system" || len(msgs[0].Parts) != 1 {
		return false
	}
	return msgs[0].Parts[0].Type == "text" && msgs[0].Parts[0].Content == text
}
