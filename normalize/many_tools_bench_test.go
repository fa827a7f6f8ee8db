package normalize

import (
	"encoding/json"
	"fmt"
	"strconv"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/replaycase"
)

// manyTools is an agent's offer of n tools as a Chat Completions request lists them, each
// with a schema of about 1.2 KB (nested objects, enums, descriptions).
func manyTools(n int) []any {
	tools := make([]any, n)
	for i := range tools {
		props := map[string]any{}
		for p := range 8 {
			props[fmt.Sprintf("field_%d_%d", i, p)] = map[string]any{
				"type": "string", "description": fmt.Sprintf("Filter %d: a value the user named, or \"any\".", p),
				"enum": []any{"alpha", "beta", "gamma", "delta"}, "default": "any",
			}
		}
		props["options"] = map[string]any{"type": "object", "required": []any{"limit"}, "properties": map[string]any{
			"limit": map[string]any{"type": "integer", "minimum": 1, "maximum": 100}, "sort": map[string]any{"type": "string"},
		}}
		tools[i] = map[string]any{"type": "function", "function": map[string]any{
			"name": fmt.Sprintf("lookup_%d", i), "description": "Looks records up by several filters.",
			"parameters": map[string]any{"type": "object", "properties": props, "required": []any{fmt.Sprintf("field_%d_0", i)}},
		}}
	}
	return tools
}

// withTools rewrites the OpenInference fixture's model calls to offer tools, where that
// instrumentation records them: in the request body (input.value), in
// llm.invocation_parameters and as llm.tools.N.tool.json_schema.
func withTools(tb testing.TB, tools []any) ptrace.Traces {
	td := testfixtures.Traces(tb, testfixtures.OpenInference)
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, span := range ss.Spans().All() {
				a := span.Attributes()
				if kind, _ := a.Get("openinference.span.kind"); kind.Str() != "LLM" {
					continue
				}
				for _, key := range []string{"input.value", "llm.invocation_parameters"} {
					v, ok := a.Get(key)
					if !ok {
						continue
					}
					var body map[string]any
					if err := json.Unmarshal([]byte(v.Str()), &body); err != nil {
						tb.Fatal(key, err)
					}
					body["tools"] = tools
					text, err := json.Marshal(body)
					if err != nil {
						tb.Fatal(err)
					}
					v.SetStr(string(text))
				}
				if _, ok := a.Get("llm.tools.0.tool.json_schema"); !ok {
					continue
				}
				for i, tool := range tools {
					text, err := json.Marshal(tool)
					if err != nil {
						tb.Fatal(err)
					}
					a.PutStr("llm.tools."+strconv.Itoa(i)+".tool.json_schema", string(text))
				}
			}
		}
	}
	return td
}

// BenchmarkBuildManyTools builds the OpenInference fixture's case with its two model calls
// offering 0, 5 and 20 tools: an agent offers its tools on every call, and the instrumentation
// records each schema three times.
//
//	go test -run '^$' -bench BuildManyTools -benchmem ./normalize/
func BenchmarkBuildManyTools(b *testing.B) {
	logs := testfixtures.Logs(b, testfixtures.OpenInference)
	for _, n := range []int{0, 5, 20} {
		td := testfixtures.Traces(b, testfixtures.OpenInference)
		if n > 0 {
			td = withTools(b, manyTools(n))
		}
		c, findings, _ := Build(td, logs)
		if len(findings) > 0 {
			b.Fatalf("findings on the rewritten fixture: %v", findings)
		}
		for _, st := range c.Steps {
			if st.Kind == replaycase.StepLLM && n > 0 && len(st.ToolDefinitions) != n {
				b.Fatalf("a step offers %d tools, want %d", len(st.ToolDefinitions), n)
			}
		}
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Build(td, logs)
			}
		})
	}
}
