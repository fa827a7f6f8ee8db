package testfixtures

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// ManyTools is an agent's offer of n tools as a Chat Completions request lists them, each with
// a schema of about 1.2 KB (nested objects, enums, descriptions). The fixtures offer one small
// tool; production agents offer many on every model call, and the instrumentations record
// each schema with every call.
func ManyTools(n int) []any {
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

// OfferTools rewrites the model calls of td to offer tools instead of what they recorded,
// wherever the fixture's instrumentation records them: OpenLLMetry's gen_ai.tool.definitions,
// and OpenInference's request body (input.value), llm.invocation_parameters and
// llm.tools.N.tool.json_schema. The OpenTelemetry instrumentation records no tool definitions,
// so its runs are left as they are.
func OfferTools(td ptrace.Traces, tools []any) error {
	list, err := json.Marshal(tools)
	if err != nil {
		return err
	}
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, span := range ss.Spans().All() {
				a := span.Attributes()
				if _, ok := a.Get("gen_ai.tool.definitions"); ok {
					a.PutStr("gen_ai.tool.definitions", string(list))
				}
				if kind, _ := a.Get("openinference.span.kind"); kind.Str() == "LLM" {
					if err := offerOpenInferenceTools(a, tools); err != nil {
						return fmt.Errorf("span %s: %w", span.Name(), err)
					}
				}
			}
		}
	}
	return nil
}

func offerOpenInferenceTools(a pcommon.Map, tools []any) error {
	for _, key := range []string{"input.value", "llm.invocation_parameters"} {
		v, ok := a.Get(key)
		if !ok {
			continue
		}
		var body map[string]any
		if err := json.Unmarshal([]byte(v.Str()), &body); err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		body["tools"] = tools
		text, err := json.Marshal(body)
		if err != nil {
			return err
		}
		v.SetStr(string(text))
	}
	a.RemoveIf(func(k string, _ pcommon.Value) bool { return strings.HasPrefix(k, "llm.tools.") })
	for i, tool := range tools {
		text, err := json.Marshal(tool)
		if err != nil {
			return err
		}
		a.PutStr("llm.tools."+strconv.Itoa(i)+".tool.json_schema", string(text))
	}
	return nil
}
