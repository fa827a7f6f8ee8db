package normalize

import (
	"encoding/json"
	"testing"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Seeds: real values from the fixtures and the recorded shapes of each convention. Every target
// asserts the properties of checkBuild (fuzz_props_test.go), not only the absence of a panic.
var contentSeeds = []string{
	`[{"role":"system","parts":[{"type":"text","content":"You are a weather assistant."}]},{"role":"user","parts":[{"type":"text","content":"What is the weather in Paris today?"}]}]`,
	`[{"role":"assistant","finish_reason":"tool_call","parts":[{"type":"tool_call","id":"call_1_0","name":"get_weather","arguments":{"city":"Paris","unit":"celsius"}}]}]`,
	`[{"role":"tool","parts":[{"type":"tool_call_response","id":"call_1","response":"rainy, 57°F"}]}]`,
	`[{"type":"function","function":{"name":"get_weather","description":"d","parameters":{"type":"object"}}}]`,
	`[{"name":"search","description":"d","inputSchema":{"json":{"type":"object"}}}]`,
	`["{\"type\":\"function\",\"name\":\"weather\",\"inputSchema\":{}}"]`,
	`[{"id":"doc_123","score":0.95,"content":"x"}]`,
	`[{"role":"model","parts":[{"type":"server_tool_call","id":null,"name":"code","server_tool_call":{"type":"code_interpreter"}}]}]`,
	`[{"role":"user","parts":[{"type":"text","content":"cut he`,
	`{"role":"user"}`, `[1,2,3]`, `null`, `"plain"`, ``, `[{"parts":"oops"}]`, `[{"parts":[null]}]`,
}

func FuzzSemconvAttributes(f *testing.F) {
	for _, s := range contentSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		s = validUTF8(s)
		td := ptrace.NewTraces()
		sp := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
		sp.SetTraceID([16]byte{1})
		sp.SetSpanID([8]byte{2})
		a := sp.Attributes()
		a.PutStr("gen_ai.operation.name", "chat")
		for _, k := range []string{"gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions", "gen_ai.tool.definitions", "gen_ai.response.finish_reasons", "gen_ai.usage.input_tokens", "gen_ai.request.temperature"} {
			a.PutStr(k, s)
		}
		var raw any
		if json.Unmarshal([]byte(s), &raw) == nil { // the same content as structured values
			_ = a.PutEmpty("gen_ai.input.messages").FromRaw(raw)
		}
		ev := sp.Events().AppendEmpty()
		ev.SetName("gen_ai.content.prompt")
		ev.Attributes().PutStr("gen_ai.prompt", s)
		tool := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().AppendEmpty()
		tool.SetTraceID([16]byte{1})
		tool.SetSpanID([8]byte{3})
		tool.Attributes().PutStr("gen_ai.operation.name", "retrieval")
		tool.Attributes().PutStr("gen_ai.retrieval.documents", s)
		checkBuild(t, td, plog.NewLogs(), s)
	})
}

func FuzzEventBodies(f *testing.F) {
	for _, s := range append(contentSeeds,
		`{"content":"hi"}`,
		`{"index":0,"finish_reason":"tool_calls","message":{"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]}}`,
		`{"id":"call_1","content":{"nested":[1,2]}}`,
		`{"message":"not json","content":[{"type":"text","text":"x"},{"type":"image_url","image_url":{"url":"u"}}]}`,
		`{"exception.type":"openai.RateLimitError","exception.message":"Rate limit reached","exception.stacktrace":"Traceback"}`,
		`{"gen_ai.evaluation.name":"Relevance","gen_ai.evaluation.score.value":4.0,"gen_ai.evaluation.score.label":"relevant","gen_ai.response.id":"r"}`,
		`{"gen_ai.evaluation.name":"Relevance","gen_ai.evaluation.score.value":"high"}`) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		s = validUTF8(s)
		var body map[string]any
		if json.Unmarshal([]byte(s), &body) != nil {
			body = map[string]any{"content": s, "message": s}
		}
		td := ptrace.NewTraces()
		sp := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
		sp.SetTraceID([16]byte{1})
		sp.SetSpanID([8]byte{2})
		ld := plog.NewLogs()
		lrs := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
		for _, name := range []string{"gen_ai.system.message", "gen_ai.user.message", "gen_ai.assistant.message", "gen_ai.tool.message", "gen_ai.choice",
			"gen_ai.client.inference.operation.details", "gen_ai.client.operation.exception", "gen_ai.evaluation.result"} {
			lr := lrs.AppendEmpty()
			lr.SetTraceID([16]byte{1})
			lr.SetSpanID([8]byte{2})
			lr.SetEventName(name)
			_ = lr.Body().SetEmptyMap().FromRaw(body)
			ev := sp.Events().AppendEmpty()
			ev.SetName(name)
			_ = ev.Attributes().FromRaw(body)
		}
		checkBuild(t, td, ld, s)
	})
}

// fuzzSpan builds a one-span trace whose attributes all hold s, under the given keys, and checks
// the case built from it.
func fuzzSpan(t *testing.T, s string, name string, fixed map[string]any, keys ...string) {
	td := ptrace.NewTraces()
	sp := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	sp.SetTraceID([16]byte{1})
	sp.SetSpanID([8]byte{2})
	sp.SetName(name)
	_ = sp.Attributes().FromRaw(fixed)
	for _, k := range keys {
		sp.Attributes().PutStr(k, s)
	}
	checkBuild(t, td, plog.NewLogs(), s)
}

var openInferenceSeeds = []string{
	`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":{}}}],"temperature":0.2,"max_tokens":256,"seed":7,"stop":["x"],"tool_choice":{"type":"function","function":{"name":"f"}}}`,
	`{"id":"chatcmpl-1","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3,"prompt_tokens_details":{"cached_tokens":1}}}`,
	`{"type":"function","function":{"name":"get_weather","parameters":{"type":"object"}}}`,
	`{"messages": "oops"}`, `[`, `{"choices":[null, 1, {"message":[]}]}`,
}

func FuzzOpenInferenceAttributes(f *testing.F) {
	for _, s := range append(openInferenceSeeds, contentSeeds...) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		s = validUTF8(s)
		fixed := map[string]any{"openinference.span.kind": "LLM", "input.mime_type": "application/json", "output.mime_type": "application/json"}
		fuzzSpan(t, s, "llm", fixed, "input.value", "output.value", "llm.invocation_parameters", "llm.tools.0.tool.json_schema",
			"llm.input_messages.0.message.role", "llm.input_messages.0.message.content", "llm.input_messages.1.message.tool_calls.0.tool_call.function.arguments",
			"llm.output_messages.0.message.contents.0.message_content.text", "llm.output_messages.0.message.tool_call_id", "llm.token_count.prompt", "llm.finish_reason")
		for _, kind := range []string{"TOOL", "RETRIEVER", "RERANKER", "AGENT", "EMBEDDING"} {
			fuzzSpan(t, s, kind, map[string]any{"openinference.span.kind": kind}, "input.value", "output.value", "retrieval.documents.0.document.score", "reranker.top_k")
		}
	})
}

func FuzzOpenLLMetryAttributes(f *testing.F) {
	for _, s := range append([]string{
		`[{"function":{"name":"HelloTool","arguments":"{\"name\": \"Bob\"}"},"id":"call_1","type":"function"}]`,
		`{"args":[],"kwargs":{"city":"Paris"}}`, `{"query":"q"}`, `[{"function"`, `tool`, `assistant`,
	}, contentSeeds...) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		s = validUTF8(s)
		fuzzSpan(t, s, "openai.chat", map[string]any{"llm.request.type": "chat"}, "gen_ai.prompt.0.role", "gen_ai.prompt.0.content",
			"gen_ai.prompt.1.role", "gen_ai.prompt.1.content", "gen_ai.prompt.2.tool_call_id", "gen_ai.completion.0.content",
			"gen_ai.completion.0.tool_calls.0.arguments", "gen_ai.completion.0.finish_reason", "llm.request.functions.0.parameters", "llm.usage.total_tokens")
		fuzzSpan(t, s, "tool", map[string]any{"traceloop.span.kind": "tool"}, "traceloop.entity.input", "traceloop.entity.output")
		fuzzSpan(t, s, "chroma.query", map[string]any{"db.system": "chroma"}, "db.vector.query.top_k", "traceloop.entity.input")
	})
}

func FuzzVercelAIAttributes(f *testing.F) {
	for _, s := range append([]string{
		`[{"role":"user","content":[{"type":"text","text":"hi"},{"type":"tool-call","toolCallId":"c","toolName":"t","input":{"a":1}},{"type":"tool-result","toolCallId":"c","output":{"type":"text","value":"r"}},{"type":"image","image":"u"}]}]`,
		`["{\"type\":\"function\",\"name\":\"getWeather\",\"inputSchema\":{}}"]`,
		`[{"toolCallId":"c","toolName":"t","input":"{\"a\":1}"}]`, `{"type":"auto"}`, `{"system":"s","messages":[{"role":"user","content":"x"}]}`,
	}, contentSeeds...) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		s = validUTF8(s)
		for _, op := range []string{"ai.generateText.doGenerate", "ai.generateText", "ai.toolCall", "ai.embed.doEmbed"} {
			fuzzSpan(t, s, op, map[string]any{"ai.operationId": op}, "ai.prompt.messages", "ai.prompt.tools", "ai.prompt.toolChoice", "ai.prompt",
				"ai.response.toolCalls", "ai.response.text", "ai.response.finishReason", "ai.toolCall.args", "ai.usage.promptTokens", "ai.settings.temperature")
		}
	})
}
