package normalize

import (
	"fmt"
	"sort"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/callsite"
	"github.com/reprise-dev/reprise/replaycase"
)

// Build assembles the case of one trace from its spans and the GenAI log events collected for
// it. It fills everything but the verdict: the evidence findings (missing or unreadable
// content) come back separately so the caller can apply its policy. genAI is false when no
// span of the trace carries GenAI telemetry; such a trace is not a case.
func Build(spans ptrace.Traces, logs plog.Logs) (c *replaycase.Case, findings []replaycase.Reason, genAI bool) {
	c = &replaycase.Case{SchemaVersion: replaycase.SchemaVersion, AdapterVersion: AdapterVersion, Status: replaycase.StatusAccepted}
	eventsBySpan := map[string][]plog.LogRecord{}
	forEachLog(logs, func(lr plog.LogRecord) {
		c.Provenance.EventCount++
		id := lr.SpanID().String()
		eventsBySpan[id] = append(eventsBySpan[id], lr)
		if c.Provenance.TraceID == "" {
			c.Provenance.TraceID = lr.TraceID().String()
		}
	})

	for _, evs := range eventsBySpan {
		sort.SliceStable(evs, func(i, j int) bool {
			if evs[i].Timestamp() != evs[j].Timestamp() {
				return evs[i].Timestamp() < evs[j].Timestamp()
			}
			return evs[i].ObservedTimestamp() < evs[j].ObservedTimestamp()
		})
	}

	var (
		steps     []Normalized
		roots     []ptrace.Span
		rootRes   = map[string]ptrace.ResourceSpans{}
		services  = map[string]bool{}
		minSpanID string
	)
	forEachSpan(spans, func(rs ptrace.ResourceSpans, ss ptrace.ScopeSpans, sp ptrace.Span) {
		c.Provenance.SpanCount++
		c.Provenance.TraceID = sp.TraceID().String()
		id := sp.SpanID().String()
		if minSpanID == "" || id < minSpanID {
			minSpanID = id
		}
		services[getStr(rs.Resource().Attributes(), "service.name")] = true
		if sp.ParentSpanID().IsEmpty() {
			roots = append(roots, sp)
			rootRes[id] = rs
		}
		in := SpanInput{Resource: rs.Resource(), Scope: ss.Scope(), Span: sp, Events: eventsBySpan[id]}
		if n, ok := Span(&in); ok {
			steps = append(steps, n)
		}
	})
	for s := range services {
		c.Provenance.Services = append(c.Provenance.Services, s)
	}
	sort.Strings(c.Provenance.Services)

	sort.SliceStable(steps, func(i, j int) bool { return stepBefore(&steps[i].Step, &steps[j].Step) })
	root := pickRoot(roots, steps)
	var rootStep *Normalized
	for i := range steps {
		findings = append(findings, steps[i].Findings...)
		if root != nil && steps[i].Step.SpanID == root.SpanID().String() && steps[i].Step.Kind == replaycase.StepAgent {
			rootStep = &steps[i]
			continue
		}
		st := steps[i].Step
		st.Index = len(c.Steps)
		if st.Kind == replaycase.StepLLM {
			req := callsite.FromStep(&st)
			st.CallSiteFields = req.RecordedFields()
			st.CallSiteID = req.ID(st.CallSiteFields)
		}
		c.Steps = append(c.Steps, st)
		setStr(&c.ConversationID, steps[i].ConversationID)
	}
	genAI = rootStep != nil || len(c.Steps) > 0
	conventions := map[string]bool{}
	for _, n := range steps {
		for _, cv := range n.Step.Conventions {
			conventions[cv] = true
		}
	}
	for cv := range conventions {
		c.Provenance.Conventions = append(c.Provenance.Conventions, cv)
	}
	sort.Strings(c.Provenance.Conventions)

	anchor := minSpanID
	if root != nil {
		anchor = root.SpanID().String()
		c.Provenance.RootSpanID = anchor
		res := rootRes[anchor].Resource().Attributes()
		c.Provenance.ServiceName = getStr(res, "service.name")
		c.Provenance.ServiceVersion = getStr(res, "service.version")
		c.StartTime = replaycase.UnixNanoUTC(root.StartTimestamp())
		c.EndTime = replaycase.UnixNanoUTC(root.EndTimestamp())
	} else if len(c.Provenance.Services) > 0 {
		c.Provenance.ServiceName = c.Provenance.Services[0]
	}
	if anchor == "" {
		anchor = "events-only"
	}
	c.CaseID = replaycase.ID(c.Provenance.TraceID, anchor)
	for _, st := range c.Steps {
		if c.StartTime.IsZero() || (!st.StartTime.IsZero() && st.StartTime.Before(c.StartTime)) {
			c.StartTime = st.StartTime
		}
		if st.EndTime.After(c.EndTime) {
			c.EndTime = st.EndTime
		}
	}

	summarize(c, rootStep)
	findings = append(findings, evidence(c, root != nil)...)
	return c, findings, genAI
}

// stepBefore orders steps by start time, then end time, then span id.
func stepBefore(a, b *replaycase.Step) bool {
	if !a.StartTime.Equal(b.StartTime) {
		return a.StartTime.Before(b.StartTime)
	}
	if !a.EndTime.Equal(b.EndTime) {
		return a.EndTime.Before(b.EndTime)
	}
	return a.SpanID < b.SpanID
}

// pickRoot chooses the case root among the parentless spans: an agent span if there is one,
// else the earliest.
func pickRoot(roots []ptrace.Span, steps []Normalized) *ptrace.Span {
	if len(roots) == 0 {
		return nil
	}
	agents := map[string]bool{}
	for _, n := range steps {
		if n.Step.Kind == replaycase.StepAgent {
			agents[n.Step.SpanID] = true
		}
	}
	best := 0
	for i, r := range roots {
		bi, ri := agents[roots[best].SpanID().String()], agents[r.SpanID().String()]
		if (ri && !bi) || (ri == bi && r.StartTimestamp() < roots[best].StartTimestamp()) {
			best = i
		}
	}
	return &roots[best]
}

// summarize fills the case-level fields from the root agent span and the steps.
func summarize(c *replaycase.Case, root *Normalized) {
	var firstLLM, lastLLM *replaycase.Step
	for i := range c.Steps {
		st := &c.Steps[i]
		if st.Kind != replaycase.StepLLM {
			continue
		}
		if firstLLM == nil {
			firstLLM = st
		}
		if lastLLM == nil || !st.EndTime.Before(lastLLM.EndTime) {
			lastLLM = st
		}
	}

	if root != nil {
		rs := &root.Step
		c.AgentName = rs.AgentName
		if root.ConversationID != "" {
			c.ConversationID = root.ConversationID
		}
		c.InputMessages = withSystem(rs.SystemInstructions, rs.InputMessages)
		if n := len(rs.OutputMessages); n > 0 {
			c.FinalOutput = &rs.OutputMessages[n-1]
		}
		c.ModelConfig = rs.ModelConfig
		c.ToolDefinitions = mergeTools(c.ToolDefinitions, rs.ToolDefinitions)
	}
	if c.AgentName == "" {
		for _, st := range c.Steps {
			if st.AgentName != "" {
				c.AgentName = st.AgentName
				break
			}
		}
	}
	if firstLLM != nil {
		if len(c.InputMessages) == 0 {
			c.InputMessages = withSystem(firstLLM.SystemInstructions, firstLLM.InputMessages)
		}
		provider := c.ModelConfig.Provider
		c.ModelConfig = firstLLM.ModelConfig
		setStr(&c.ModelConfig.Provider, provider)
	}
	if c.FinalOutput == nil && lastLLM != nil && len(lastLLM.OutputMessages) > 0 {
		c.FinalOutput = &lastLLM.OutputMessages[0]
	}

	for _, st := range c.Steps {
		switch st.Kind {
		case replaycase.StepLLM, replaycase.StepEmbedding:
			c.Usage.Add(st.Usage)
			c.ToolDefinitions = mergeTools(c.ToolDefinitions, st.ToolDefinitions)
		case replaycase.StepRetrieval:
			if st.Retrieval != nil {
				c.RetrievalRefs = append(c.RetrievalRefs, *st.Retrieval)
			}
		}
	}
	if c.Usage == (replaycase.Usage{}) && root != nil {
		c.Usage = root.Step.Usage
	}
	c.ToolCalls = toolCalls(c.Steps)
}

// withSystem puts separately recorded system instructions in front of the messages.
func withSystem(system []replaycase.Part, msgs []replaycase.Message) []replaycase.Message {
	if len(system) == 0 {
		return msgs
	}
	return append([]replaycase.Message{{Role: "system", Parts: system}}, msgs...)
}

func mergeTools(have, more []replaycase.ToolDefinition) []replaycase.ToolDefinition {
	for _, d := range more {
		dup := false
		for _, h := range have {
			dup = dup || h.Name == d.Name
		}
		if !dup {
			have = append(have, d)
		}
	}
	return have
}

// toolCalls joins the tool calls the model requested (tool_call parts in LLM outputs) with
// their executions (tool steps) and with results sent back to the model (tool_call_response
// parts in later LLM inputs), by call id, or by name and order when an id is missing.
func toolCalls(steps []replaycase.Step) []replaycase.ToolCall {
	var calls []replaycase.ToolCall
	// find returns the call with this id, else (when one side has no id) the first call of
	// that name not executed yet.
	find := func(id, name string) int {
		for i := range calls {
			if id != "" && calls[i].ID == id {
				return i
			}
		}
		for i := range calls {
			if (id == "" || calls[i].ID == "") && name != "" && calls[i].Name == name && calls[i].SpanID == "" {
				return i
			}
		}
		return -1
	}
	for _, st := range steps {
		switch st.Kind {
		case replaycase.StepLLM:
			for _, m := range st.InputMessages {
				for _, p := range m.Parts {
					if i := find(p.ID, ""); p.Type == "tool_call_response" && p.ID != "" && i >= 0 {
						setStr(&calls[i].Result, p.Response)
					}
				}
			}
			for _, m := range st.OutputMessages {
				for _, p := range m.Parts {
					if p.Type != "tool_call" {
						continue
					}
					if i := find(p.ID, p.Name); i >= 0 {
						setStr(&calls[i].Name, p.Name)
						setStr(&calls[i].Arguments, p.Arguments)
						setStr(&calls[i].RequestedBy, st.SpanID)
					} else {
						calls = append(calls, replaycase.ToolCall{ID: p.ID, Name: p.Name, Arguments: p.Arguments, RequestedBy: st.SpanID})
					}
				}
			}
		case replaycase.StepTool:
			tc := st.ToolCall
			if tc == nil {
				tc = &replaycase.ToolCall{SpanID: st.SpanID}
			}
			if i := find(tc.ID, tc.Name); i >= 0 {
				c := &calls[i]
				setStr(&c.ID, tc.ID)
				setStr(&c.Arguments, tc.Arguments)
				c.SpanID = st.SpanID
				if tc.Result != "" {
					c.Result = tc.Result
				}
				setStr(&c.Error, tc.Error)
			} else {
				calls = append(calls, *tc)
			}
		}
	}
	return calls
}

// evidence lists what the case lacks to be replayed. The caller's policy decides which of
// these quarantine it.
func evidence(c *replaycase.Case, hasRoot bool) []replaycase.Reason {
	var out []replaycase.Reason
	add := func(code, detail, span string) {
		out = append(out, replaycase.Reason{Code: code, Detail: detail, SpanID: span})
	}
	if !hasRoot {
		add(replaycase.ReasonNoRootSpan, fmt.Sprintf("none of the %d spans received is the trace's root span", c.Provenance.SpanCount), "")
	}
	llm := 0
	for _, st := range c.Steps {
		if st.Kind != replaycase.StepLLM {
			continue
		}
		llm++
		call := fmt.Sprintf("model call %q", st.Name)
		if !hasContent(st.InputMessages) && len(st.SystemInstructions) == 0 {
			add(replaycase.ReasonNoInputMessages, call+" recorded no input messages (is content capture on in the instrumentation?)", st.SpanID)
		}
		if !hasContent(st.OutputMessages) {
			detail := call + " recorded no output messages"
			if hasToolCalls(st.OutputMessages) {
				detail = call + " recorded its tool calls without arguments"
			}
			add(replaycase.ReasonNoModelOutput, detail, st.SpanID)
		}
		if st.ModelConfig.RequestModel == "" && st.ModelConfig.ResponseModel == "" {
			add(replaycase.ReasonNoModelName, call+" names no model", st.SpanID)
		}
	}
	if llm == 0 {
		add(replaycase.ReasonNoLLMSteps, fmt.Sprintf("no model call among %d spans", c.Provenance.SpanCount), "")
	}
	for _, tc := range c.ToolCalls {
		if tc.Result == "" && tc.Error == "" {
			span := tc.SpanID
			if span == "" {
				span = tc.RequestedBy
			}
			add(replaycase.ReasonToolCallWithoutResult, fmt.Sprintf("tool call %q (id %q) has no recorded result or error", tc.Name, tc.ID), span)
		}
	}
	return out
}

// hasContent reports whether any message has a part with recorded content.
func hasContent(msgs []replaycase.Message) bool {
	for _, m := range msgs {
		for _, p := range m.Parts {
			if p.Content != "" || p.Arguments != "" || p.Response != "" || p.URI != "" || p.FileID != "" {
				return true
			}
		}
	}
	return false
}

func hasToolCalls(msgs []replaycase.Message) bool {
	for _, m := range msgs {
		for _, p := range m.Parts {
			if p.Type == "tool_call" {
				return true
			}
		}
	}
	return false
}

func forEachSpan(td ptrace.Traces, f func(ptrace.ResourceSpans, ptrace.ScopeSpans, ptrace.Span)) {
	for i := 0; i < td.ResourceSpans().Len(); i++ {
		rs := td.ResourceSpans().At(i)
		for j := 0; j < rs.ScopeSpans().Len(); j++ {
			ss := rs.ScopeSpans().At(j)
			for k := 0; k < ss.Spans().Len(); k++ {
				f(rs, ss, ss.Spans().At(k))
			}
		}
	}
}

func forEachLog(ld plog.Logs, f func(plog.LogRecord)) {
	for i := 0; i < ld.ResourceLogs().Len(); i++ {
		rl := ld.ResourceLogs().At(i)
		for j := 0; j < rl.ScopeLogs().Len(); j++ {
			lrs := rl.ScopeLogs().At(j).LogRecords()
			for k := 0; k < lrs.Len(); k++ {
				f(lrs.At(k))
			}
		}
	}
}
