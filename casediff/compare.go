package casediff

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"reflect"
	"strings"

	"github.com/reprise-dev/reprise/replaycase"
)

// Compare lists what changed from case a to case b.
func Compare(a, b *replaycase.Case) Report {
	r := Report{
		Schema: Schema,
		A:      caseRef(a),
		B:      caseRef(b),
		Counts: map[FindingType]int{},
	}
	r.Findings = append(r.Findings, retrievals(a.RetrievalRefs, b.RetrievalRefs)...)
	r.Findings = append(r.Findings, toolCalls(a.ToolCalls, b.ToolCalls)...)
	r.Findings = append(r.Findings, modelCalls(a.Steps, b.Steps)...)
	r.Findings = append(r.Findings, route(a, b)...)
	r.Findings = append(r.Findings, answer(a, b)...)
	r.Findings = append(r.Findings, usage(a.Usage, b.Usage)...)
	r.Findings = append(r.Findings, cost(a.Cost, b.Cost)...)
	r.Findings = append(r.Findings, latency(a, b)...)
	if r.Findings == nil {
		r.Findings = []Finding{}
	}
	for _, f := range r.Findings {
		r.Counts[f.Type]++
	}
	return r
}

func caseRef(c *replaycase.Case) CaseRef {
	ref := CaseRef{CaseID: c.CaseID, AgentName: c.AgentName, Status: string(c.Status)}
	if from, edit, ok := replaycase.MutationOf(c.Metadata); ok {
		ref.MutationOf, ref.Mutation = from, edit
	}
	return ref
}

func docIDs(r replaycase.Retrieval) []string {
	ids := make([]string, len(r.Documents))
	for i, d := range r.Documents {
		ids[i] = d.ID
	}
	return ids
}

func retrievals(a, b []replaycase.Retrieval) []Finding {
	equal := func(i, j int) bool {
		return a[i].Query == b[j].Query && a[i].DataSource == b[j].DataSource && reflect.DeepEqual(docIDs(a[i]), docIDs(b[j]))
	}
	always := func(int, int) bool { return true }
	var out []Finding
	for _, p := range align(len(a), len(b), equal, always) {
		pa, pb := fmt.Sprintf("retrieval_refs[%d]", p.A), fmt.Sprintf("retrieval_refs[%d]", p.B)
		f := Finding{Type: RetrievalDrift, DecisionPoint: PointRetrieval}
		switch {
		case p.B < 0:
			f.PathA, f.Before, f.Detail = pa, a[p.A].Query, "retrieval removed"
			out = append(out, f)
			continue
		case p.A < 0:
			f.PathB, f.After, f.Detail = pb, b[p.B].Query, "retrieval added"
			out = append(out, f)
			continue
		}
		ra, rb := a[p.A], b[p.B]
		for _, c := range []struct {
			field   string
			x, y    any
			detail  string
			changed bool
		}{
			{field: "query", x: ra.Query, y: rb.Query, detail: "query changed", changed: ra.Query != rb.Query},
			{field: "data_source", x: ra.DataSource, y: rb.DataSource, detail: "data source changed", changed: ra.DataSource != rb.DataSource},
			{field: "documents", x: docIDs(ra), y: docIDs(rb), detail: documentChange(docIDs(ra), docIDs(rb)), changed: !reflect.DeepEqual(docIDs(ra), docIDs(rb))},
		} {
			if c.changed {
				out = append(out, Finding{Type: RetrievalDrift, DecisionPoint: PointRetrieval,
					PathA: pa + "." + c.field, PathB: pb + "." + c.field, Before: c.x, After: c.y, Detail: c.detail})
			}
		}
	}
	return out
}

// documentChange says whether the retrieved set changed or only its order.
func documentChange(a, b []string) string {
	count := map[string]int{}
	for _, id := range a {
		count[id]++
	}
	for _, id := range b {
		count[id]--
	}
	for _, n := range count {
		if n != 0 {
			return "document set changed"
		}
	}
	return "document order changed"
}

// callValues are a tool call's arguments and result read as JSON values, once: the alignment
// compares every call of one run with every call of the other.
type callValues struct{ args, result any }

func parseCalls(calls []replaycase.ToolCall) []callValues {
	out := make([]callValues, len(calls))
	for i, tc := range calls {
		out[i] = callValues{jsonValue(tc.Arguments), jsonValue(tc.Result)}
	}
	return out
}

func toolCalls(a, b []replaycase.ToolCall) []Finding {
	va, vb := parseCalls(a), parseCalls(b)
	equal := func(i, j int) bool {
		return a[i].Name == b[j].Name && a[i].Error == b[j].Error &&
			equalValues(va[i].args, vb[j].args) && equalValues(va[i].result, vb[j].result)
	}
	sameTool := func(i, j int) bool { return a[i].Name == b[j].Name }
	var out []Finding
	for _, p := range align(len(a), len(b), equal, sameTool) {
		pa, pb := fmt.Sprintf("tool_calls[%d]", p.A), fmt.Sprintf("tool_calls[%d]", p.B)
		switch {
		case p.B < 0:
			out = append(out, Finding{Type: ToolCallRemoved, DecisionPoint: PointTools, PathA: pa,
				Before: callValue(a[p.A]), Detail: "tool " + a[p.A].Name + " no longer called"})
			continue
		case p.A < 0:
			out = append(out, Finding{Type: ToolCallAdded, DecisionPoint: PointTools, PathB: pb,
				After: callValue(b[p.B]), Detail: "tool " + b[p.B].Name + " newly called"})
			continue
		}
		ta, tb := a[p.A], b[p.B]
		for _, c := range diffValues("", va[p.A].args, vb[p.B].args) {
			out = append(out, Finding{Type: ToolArgsChanged, DecisionPoint: PointTools,
				PathA: pa + ".arguments" + c.Path, PathB: pb + ".arguments" + c.Path, Before: c.Before, After: c.After,
				Detail: "arguments of " + ta.Name + " changed"})
		}
		for _, c := range diffValues("", va[p.A].result, vb[p.B].result) {
			out = append(out, Finding{Type: ToolResultChanged, DecisionPoint: PointTools,
				PathA: pa + ".result" + c.Path, PathB: pb + ".result" + c.Path, Before: c.Before, After: c.After,
				Detail: "result of " + ta.Name + " changed"})
		}
		if ta.Error != tb.Error {
			out = append(out, Finding{Type: ToolResultChanged, DecisionPoint: PointTools,
				PathA: pa + ".error", PathB: pb + ".error", Before: ta.Error, After: tb.Error, Detail: "error of " + ta.Name + " changed"})
		}
	}
	return out
}

func callValue(tc replaycase.ToolCall) map[string]any {
	return map[string]any{"name": tc.Name, "arguments": jsonValue(tc.Arguments)}
}

// llmStep is an LLM step with its index among the case's steps.
type llmStep struct {
	index int
	step  *replaycase.Step
}

func llmSteps(steps []replaycase.Step) []llmStep {
	var out []llmStep
	for i := range steps {
		if steps[i].Kind == replaycase.StepLLM {
			out = append(out, llmStep{i, &steps[i]})
		}
	}
	return out
}

func modelCalls(stepsA, stepsB []replaycase.Step) []Finding {
	a, b := llmSteps(stepsA), llmSteps(stepsB)
	idsA, idsB := comparableIDs(a, b)
	equal := func(i, j int) bool {
		return idsA[i] != "" && idsA[i] == idsB[j]
	}
	always := func(int, int) bool { return true }
	var out []Finding
	for _, p := range align(len(a), len(b), equal, always) {
		switch {
		case p.B < 0:
			out = append(out, Finding{Type: ModelCallRemoved, DecisionPoint: PointModel,
				PathA: fmt.Sprintf("steps[%d]", a[p.A].index), Before: a[p.A].step.ModelConfig.RequestModel})
			continue
		case p.A < 0:
			out = append(out, Finding{Type: ModelCallAdded, DecisionPoint: PointModel,
				PathB: fmt.Sprintf("steps[%d]", b[p.B].index), After: b[p.B].step.ModelConfig.RequestModel})
			continue
		}
		sa, sb := a[p.A], b[p.B]
		pa, pb := fmt.Sprintf("steps[%d]", sa.index), fmt.Sprintf("steps[%d]", sb.index)
		for _, c := range diffValues("", configValue(sa.step.ModelConfig), configValue(sb.step.ModelConfig)) {
			out = append(out, Finding{Type: ModelConfigChanged, DecisionPoint: PointModel,
				PathA: pa + ".model_config" + c.Path, PathB: pb + ".model_config" + c.Path, Before: c.Before, After: c.After})
		}
		for _, c := range diffValues("", toolsValue(sa.step), toolsValue(sb.step)) {
			out = append(out, Finding{Type: ModelConfigChanged, DecisionPoint: PointModel,
				PathA: pa + c.Path, PathB: pb + c.Path, Before: c.Before, After: c.After, Detail: "tools offered changed"})
		}
		for _, c := range diffValues("", promptValue(sa.step), promptValue(sb.step)) {
			out = append(out, Finding{Type: PromptChanged, DecisionPoint: PointModel,
				PathA: pa + c.Path, PathB: pb + c.Path, Before: c.Before, After: c.After})
		}
		out = append(out, modelOutputChanged(pa, pb, sa.step, sb.step)...)
		for _, c := range diffValues("", toolErrorsValue(sa.step), toolErrorsValue(sb.step)) {
			out = append(out, Finding{Type: ToolResultChanged, DecisionPoint: PointTools,
				PathA: pa + c.Path, PathB: pb + c.Path, Before: c.Before, After: c.After,
				Detail: "a tool result sent to the model as a failure (is_error) changed"})
		}
	}
	return out
}

// configValue is the model and the sampling parameters as a JSON-shaped value; fields that were
// not recorded are absent, so "not recorded" and "recorded" differ.
func configValue(mc replaycase.ModelConfig) map[string]any {
	v := map[string]any{}
	set := func(k string, ok bool, x any) {
		if ok {
			v[k] = x
		}
	}
	set("request_model", mc.RequestModel != "", mc.RequestModel)
	set("temperature", mc.Temperature != nil, deref(mc.Temperature))
	set("top_p", mc.TopP != nil, deref(mc.TopP))
	set("max_tokens", mc.MaxTokens != nil, deref(mc.MaxTokens))
	set("seed", mc.Seed != nil, deref(mc.Seed))
	set("stop", len(mc.Stop) > 0, strings.Join(mc.Stop, "\x00"))
	set("tool_choice", mc.ToolChoice != "", mc.ToolChoice)
	set("top_k", mc.TopK != nil, deref(mc.TopK))
	set("frequency_penalty", mc.FrequencyPenalty != nil, deref(mc.FrequencyPenalty))
	set("presence_penalty", mc.PresencePenalty != nil, deref(mc.PresencePenalty))
	set("choice_count", mc.ChoiceCount != nil, deref(mc.ChoiceCount))
	set("output_type", mc.OutputType != "", mc.OutputType)
	// A JSON value, so that a changed schema names the member that changed.
	set("response_format", mc.ResponseFormat != "", jsonValue(mc.ResponseFormat))
	set("reasoning_effort", mc.ReasoningEffort != "", mc.ReasoningEffort)
	set("reasoning_summary", mc.ReasoningSummary != "", mc.ReasoningSummary)
	set("thinking", mc.Thinking != "", jsonValue(mc.Thinking)) // a changed budget is named thinking.budget_tokens
	set("parallel_tool_calls", mc.ParallelToolCalls != nil, deref(mc.ParallelToolCalls))
	set("verbosity", mc.Verbosity != "", mc.Verbosity)
	set("logit_bias", mc.LogitBias != "", jsonValue(mc.LogitBias)) // a changed bias is named by its token
	return v
}

// toolsValue is the tools offered to the model in one call, in the request's order: a changed
// description or parameter schema changes what the model does as much as a changed prompt, and
// the call-site id that changes with it only aligns calls. Schemas compare as JSON values
// (key order is the instrumentation's, not the agent's). Absent when none were recorded, so
// "not recorded" and "recorded" differ, as for the sampling parameters.
func toolsValue(st *replaycase.Step) map[string]any {
	v := map[string]any{}
	if len(st.ToolDefinitions) == 0 {
		return v
	}
	defs := make([]any, len(st.ToolDefinitions))
	for i, d := range st.ToolDefinitions {
		def := map[string]any{"type": d.Type, "name": d.Name}
		if d.Description != "" {
			def["description"] = d.Description
		}
		if d.Parameters != "" {
			def["parameters"] = jsonValue(d.Parameters)
		}
		defs[i] = def
	}
	v["tool_definitions"] = defs
	return v
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// toolErrorsValue marks the tool results a model call was sent as failures (Anthropic's
// is_error), by their place in its input: the model reads a failure otherwise than the same
// text as a success, and the tool calls (toolCalls) hold what the tool span recorded, not what
// the agent told the model. Absent when none failed.
func toolErrorsValue(st *replaycase.Step) map[string]any {
	v := map[string]any{}
	for i, m := range st.InputMessages {
		for j, p := range m.Parts {
			if p.Type == "tool_call_response" && p.Error {
				v[fmt.Sprintf("input_messages[%d].parts[%d].is_error", i, j)] = true
			}
		}
	}
	return v
}

// promptValue is what the developer and the user said to the model in one call: system
// instructions and system, developer and user messages. Tool results and earlier answers in the
// input are consequences of other decisions and are compared there.
func promptValue(st *replaycase.Step) map[string]any {
	v := map[string]any{}
	if len(st.SystemInstructions) > 0 {
		v["system_instructions"] = promptText(st.SystemInstructions)
	}
	for i, m := range st.InputMessages {
		switch m.Role {
		case "system", "developer", "user":
			v[fmt.Sprintf("input_messages[%d]", i)] = m.Role + ": " + promptText(m.Parts)
		}
	}
	return v
}

// promptText is the text of a prompt's parts with each media part (an image, a file, a blob)
// in brackets: a question asked about another image is another question. A blob's content
// stands as a hash (it may be megabytes of base64); parts that are consequences of other
// decisions (tool calls and their responses, reasoning) are left to the points that compare them.
func promptText(parts []replaycase.Part) string {
	var b strings.Builder
	for _, p := range parts {
		switch p.Type {
		case "text", "":
			b.WriteString(p.Content)
		case "tool_call", "tool_call_response", "reasoning":
		default:
			fields := []string{p.Type}
			for _, f := range []string{p.MimeType, p.Modality, p.URI, p.FileID} {
				if f != "" {
					fields = append(fields, f)
				}
			}
			if p.Content != "" {
				sum := sha256.Sum256([]byte(p.Content))
				fields = append(fields, "sha256:"+hex.EncodeToString(sum[:8]))
			}
			b.WriteString("[" + strings.Join(fields, " ") + "]")
		}
	}
	return b.String()
}

func partsText(parts []replaycase.Part) string {
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" || p.Type == "" {
			b.WriteString(p.Content)
		}
	}
	return b.String()
}

// routeOf is the sequence of agents a run went through: the case's agent, then each nested
// agent step in start order.
func routeOf(c *replaycase.Case) []any {
	r := []any{c.AgentName}
	for _, st := range c.Steps {
		if st.Kind == replaycase.StepAgent {
			name := st.AgentName
			if name == "" {
				name = st.Name
			}
			r = append(r, name)
		}
	}
	return r
}

func route(a, b *replaycase.Case) []Finding {
	ra, rb := routeOf(a), routeOf(b)
	if reflect.DeepEqual(ra, rb) {
		return nil
	}
	return []Finding{{Type: RouteChanged, DecisionPoint: PointRoute, PathA: "steps", PathB: "steps", Before: ra, After: rb}}
}

func answerText(c *replaycase.Case) string {
	if c.FinalOutput == nil {
		return ""
	}
	return partsText(c.FinalOutput.Parts)
}

func answer(a, b *replaycase.Case) []Finding {
	if answerText(a) == answerText(b) {
		return nil
	}
	return []Finding{{Type: AnswerChanged, DecisionPoint: PointAnswer, PathA: "final_output", PathB: "final_output",
		Before: answerText(a), After: answerText(b)}}
}

func usage(a, b replaycase.Usage) []Finding {
	var out []Finding
	for _, c := range []struct {
		field string
		x, y  int64
	}{
		{"input_tokens", a.InputTokens, b.InputTokens},
		{"output_tokens", a.OutputTokens, b.OutputTokens},
		{"cache_read_input_tokens", a.CacheReadInputTokens, b.CacheReadInputTokens},
		{"cache_write_input_tokens", a.CacheWriteInputTokens, b.CacheWriteInputTokens},
		{"reasoning_output_tokens", a.ReasoningOutputTokens, b.ReasoningOutputTokens},
		{"total_tokens", a.TotalTokens, b.TotalTokens},
	} {
		if c.x != c.y {
			out = append(out, Finding{Type: UsageChanged, DecisionPoint: PointUsage,
				PathA: "usage." + c.field, PathB: "usage." + c.field, Before: c.x, After: c.y,
				Detail: fmt.Sprintf("%+d", c.y-c.x)})
		}
	}
	return out
}

func latency(a, b *replaycase.Case) []Finding {
	da, db := a.EndTime.Sub(a.StartTime).Milliseconds(), b.EndTime.Sub(b.StartTime).Milliseconds()
	if da == db {
		return nil
	}
	return []Finding{{Type: LatencyChanged, DecisionPoint: PointLatency, PathA: "end_time", PathB: "end_time", Before: da, After: db,
		Detail: fmt.Sprintf("%+d ms", db-da)}}
}
