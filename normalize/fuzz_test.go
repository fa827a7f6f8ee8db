package normalize

import (
	"encoding/json"
	"testing"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Seeds: real values from the fixtures and the shapes in ../shared/notes/genai-wire-formats.md.
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
		Build(td, plog.NewLogs())
	})
}

func FuzzEventBodies(f *testing.F) {
	for _, s := range append(contentSeeds,
		`{"content":"hi"}`,
		`{"index":0,"finish_reason":"tool_calls","message":{"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]}}`,
		`{"id":"call_1","content":{"nested":[1,2]}}`,
		`{"message":"not json","content":[{"type":"text","text":"x"},{"type":"image_url","image_url":{"url":"u"}}]}`) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
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
		for _, name := range []string{"gen_ai.system.message", "gen_ai.user.message", "gen_ai.assistant.message", "gen_ai.tool.message", "gen_ai.choice", "gen_ai.client.inference.operation.details"} {
			lr := lrs.AppendEmpty()
			lr.SetTraceID([16]byte{1})
			lr.SetSpanID([8]byte{2})
			lr.SetEventName(name)
			_ = lr.Body().SetEmptyMap().FromRaw(body)
			ev := sp.Events().AppendEmpty()
			ev.SetName(name)
			_ = ev.Attributes().FromRaw(body)
		}
		Build(td, ld)
	})
}
