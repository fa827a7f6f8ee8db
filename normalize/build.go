package normalize

import (
	"bytes"
	"cmp"
	"slices"
	"sort"
	"sync"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/callsite"
	"github.com/reprise-dev/reprise/internal/pdatawalk"
	"github.com/reprise-dev/reprise/replaycase"
)

// Build assembles the case of one trace from its spans and the GenAI log events collected for
// it. It fills everything but the verdict: the evidence findings (missing or unreadable
// content) come back separately so the caller can apply its policy. genAI is false when no
// span of the trace carries GenAI telemetry; such a trace is not a case.
func Build(spans ptrace.Traces, logs plog.Logs) (c *replaycase.Case, findings []replaycase.Reason, genAI bool) {
	c = &replaycase.Case{SchemaVersion: replaycase.SchemaVersion, AdapterVersion: adapterVersion, Status: replaycase.StatusAccepted}
	eventsBySpan := joinEvents(logs, &c.Provenance)
	buf := normalizedSteps.Get().(*[]normalized)
	defer putNormalizedSteps(buf)
	read := readSpans(spans, eventsBySpan, &c.Provenance, buf)
	read.steps = foldDuplicateModelCalls(read.steps)
	root := pickRoot(read.roots, read.steps)
	rootStep, findings := placeSteps(c, read.steps, root)
	evaluations, problems := evaluationsOf(read, eventsBySpan)
	c.Evaluations = evaluations
	findings = append(findings, problems...)
	c.Provenance.Conventions = conventionsOf(read.steps)
	findings = append(findings, anchorCase(c, root, read)...)
	summarize(c, rootStep)
	findings = append(findings, evidence(c, root != nil)...)
	return c, findings, rootStep != nil || len(c.Steps) > 0
}

// joinEvents groups the GenAI log events by the span they belong to, each span's events in
// time order, and counts them in the provenance.
func joinEvents(logs plog.Logs, prov *replaycase.Provenance) map[pcommon.SpanID][]plog.LogRecord {
	bySpan := map[pcommon.SpanID][]plog.LogRecord{}
	for l := range pdatawalk.LogRecords(logs) {
		lr := l.Record
		prov.EventCount++
		id := lr.SpanID()
		bySpan[id] = append(bySpan[id], lr)
		if prov.TraceID == "" {
			prov.TraceID = lr.TraceID().String()
		}
	}
	for _, evs := range bySpan {
		slices.SortStableFunc(evs, func(a, b plog.LogRecord) int {
			return cmp.Or(cmp.Compare(a.Timestamp(), b.Timestamp()), cmp.Compare(a.ObservedTimestamp(), b.ObservedTimestamp()))
		})
	}
	return bySpan
}

// spansRead is what one walk over the spans of a trace found.
type spansRead struct {
	steps        []normalized            // spans with GenAI telemetry, in start order
	evaluations  []replaycase.Evaluation // gen_ai.evaluation.result events on any span, in span order
	evalProblems []replaycase.Reason     // evaluations that could not be read
	spanIDs      map[pcommon.SpanID]bool // every span received
	roots        []pdatawalk.Span        // spans without a parent, with their resource; if none, the local roots
	localRoot    bool                    // roots are local roots: spans whose parent is remote (local_root.go)
	minSpanID    string                  // anchors the case id when no root arrived, or a local root
}

// normalizedSteps holds the slices readSpans gathers a trace's steps in. A normalized step is
// large (~0.8 KiB) and lives only while Build runs: the case gets copies of the steps
// (placeSteps), never pointers into the slice, so one slice serves trace after trace.
var normalizedSteps = sync.Pool{New: func() any { return new([]normalized) }}

// pooledStepsMax is the longest slice putNormalizedSteps keeps (~3 MiB): a trace of more spans
// than that is rare, and its slice is left to the garbage collector.
const pooledStepsMax = 4096

// putNormalizedSteps empties a slice of normalizedSteps, so that it keeps no telemetry of the
// trace alive, and returns it to the pool.
func putNormalizedSteps(buf *[]normalized) {
	if cap(*buf) > pooledStepsMax {
		return
	}
	clear((*buf)[:cap(*buf)])
	*buf = (*buf)[:0]
	normalizedSteps.Put(buf)
}

// readSpans runs the adapters over every span and notes the trace's roots, services and span
// count in the provenance. It gathers the steps in *buf, grown to the trace's span count (and
// kept so for the next trace) when shorter.
func readSpans(spans ptrace.Traces, eventsBySpan map[pcommon.SpanID][]plog.LogRecord, prov *replaycase.Provenance, buf *[]normalized) spansRead {
	count := spans.SpanCount()
	// Sized once: a normalized step is large, and growing the slice span by span copied them all.
	if cap(*buf) < count {
		*buf = make([]normalized, 0, count)
	}
	read := spansRead{spanIDs: make(map[pcommon.SpanID]bool, count), steps: (*buf)[:0]}
	services := map[string]bool{}
	var lastTraceID pcommon.TraceID // the trace id is written out once per change, not per span
	var builder stepBuilder
	var remoteParents []pdatawalk.Span // spans whose parent the SDK flagged remote
	for s := range pdatawalk.Spans(spans) {
		sp := s.Span
		prov.SpanCount++
		if prov.SpanCount == 1 || sp.TraceID() != lastTraceID {
			lastTraceID = sp.TraceID()
			prov.TraceID = lastTraceID.String()
		}
		sid := sp.SpanID()
		id := sid.String()
		if read.minSpanID == "" || id < read.minSpanID {
			read.minSpanID = id
		}
		services[getStr(s.Resource.Resource().Attributes(), "service.name")] = true
		if sp.ParentSpanID().IsEmpty() {
			read.roots = append(read.roots, s)
		} else if pdatawalk.ParentIsRemote(sp) {
			remoteParents = append(remoteParents, s)
		}
		in := spanInput{Resource: s.Resource.Resource(), Scope: s.Scope.Scope(), Span: sp, SpanID: id, Events: eventsBySpan[sid]}
		n, ok := normalizeSpan(&in, &builder)
		if ok {
			read.steps = append(read.steps, n)
		}
		read.evaluations = append(read.evaluations, n.Evaluations...)
		read.evalProblems = append(read.evalProblems, n.evalFindings...)
		read.spanIDs[sid] = true
	}
	if len(read.roots) == 0 {
		read.roots = localRoots(remoteParents, read.spanIDs)
		read.localRoot = len(read.roots) > 0
	}
	for s := range services {
		prov.Services = append(prov.Services, s)
	}
	sort.Strings(prov.Services)
	sort.SliceStable(read.steps, func(i, j int) bool { return stepBefore(&read.steps[i].Step, &read.steps[j].Step) })
	read.steps = dropWrappingModelCalls(read.steps)
	carryOutputType(read.steps)
	return read
}

// evaluationsOf gathers the run's own scores: the evaluation events recorded on its spans,
// then those joined to the trace without a span that arrived (an evaluator that knows only
// the response id, or the trace).
func evaluationsOf(read spansRead, eventsBySpan map[pcommon.SpanID][]plog.LogRecord) ([]replaycase.Evaluation, []replaycase.Reason) {
	out, problems := read.evaluations, read.evalProblems
	ids := make([]pcommon.SpanID, 0, len(eventsBySpan))
	for id := range eventsBySpan {
		if !read.spanIDs[id] {
			ids = append(ids, id)
		}
	}
	slices.SortFunc(ids, func(a, b pcommon.SpanID) int { return bytes.Compare(a[:], b[:]) }) // as their hex
	for _, id := range ids {
		for _, lr := range eventsBySpan[id] {
			if eventName(lr) == "gen_ai.evaluation.result" { // convert only what is kept
				e, problem := evaluation(logEvent(lr, id.String()))
				out = append(out, e)
				if problem != nil {
					problems = append(problems, *problem)
				}
			}
		}
	}
	return out, problems
}

// placeSteps numbers the steps into the case, except the root agent span, which is the case
// itself and is returned apart. It gives each model call its call-site id and collects the
// adapters' findings.
func placeSteps(c *replaycase.Case, steps []normalized, root *pdatawalk.Span) (rootStep *normalized, findings []replaycase.Reason) {
	rootID := ""
	if root != nil {
		rootID = root.Span.SpanID().String()
	}
	for i := range steps {
		findings = append(findings, steps[i].Findings...)
		if root != nil && steps[i].Step.SpanID == rootID && steps[i].Step.Kind == replaycase.StepAgent {
			rootStep = &steps[i]
			continue
		}
		st := steps[i].Step
		st.Index = len(c.Steps)
		if st.Kind == replaycase.StepLLM {
			req := callsite.FromStep(&st)
			req.ToolErrorsRecorded = steps[i].toolErrorsRecorded
			st.CallSiteFields = req.RecordedFields()
			st.CallSiteID = req.ID(st.CallSiteFields)
		}
		if c.Steps == nil {
			c.Steps = make([]replaycase.Step, 0, len(steps)-i) // a step is large: sized once, not grown
		}
		c.Steps = append(c.Steps, st)
		setStr(&c.ConversationID, steps[i].ConversationID)
	}
	return rootStep, findings
}

// conventionsOf lists, sorted, every convention that contributed to a step.
func conventionsOf(steps []normalized) []string {
	seen := map[string]bool{}
	var out []string
	for _, n := range steps {
		for _, cv := range n.Step.Conventions {
			if !seen[cv] {
				seen[cv] = true
				out = append(out, cv)
			}
		}
	}
	sort.Strings(out)
	return out
}

// anchorCase gives the case its id, service and time span: from the root span when one
// arrived, else from the smallest span id and the steps. It reports wrong root times when the
// root is not a step (a step's own times are checked with the step).
func anchorCase(c *replaycase.Case, root *pdatawalk.Span, read spansRead) (findings []replaycase.Reason) {
	anchor := read.minSpanID
	if root != nil {
		rootID := root.Span.SpanID().String()
		if !read.localRoot {
			// A local root keeps the anchor of a run without root, the id such runs had before
			// local roots were recognised: a case rebuilt from write-ahead storage across an
			// upgrade, or delivered again, keeps its case_id.
			anchor = rootID
		}
		c.Provenance.RootSpanID = rootID
		res := root.Resource.Resource().Attributes()
		c.Provenance.ServiceName = getStr(res, "service.name")
		c.Provenance.ServiceVersion = getStr(res, "service.version")
		report := func(code, detail string) {
			if !slices.ContainsFunc(read.steps, func(n normalized) bool { return n.Step.SpanID == rootID }) {
				findings = append(findings, replaycase.Reason{Code: code, Detail: "root span " + detail, SpanID: rootID})
			}
		}
		c.StartTime, c.EndTime = spanTimes(root.Span, report)
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
	return findings
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

// pickRoot chooses the case root among the parentless spans (or, when there is none, the local
// roots): an agent span if there is one, else the earliest (of equal start times, the smallest
// span id).
func pickRoot(roots []pdatawalk.Span, steps []normalized) *pdatawalk.Span {
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
		b := roots[best].Span
		bi, ri := agents[b.SpanID().String()], agents[r.Span.SpanID().String()]
		// Equal start times fall to the smaller span id: the root anchors the case id, which
		// must not depend on the order the spans arrived in.
		rid, bid := r.Span.SpanID(), b.SpanID()
		earlier := r.Span.StartTimestamp() < b.StartTimestamp() ||
			(r.Span.StartTimestamp() == b.StartTimestamp() && bytes.Compare(rid[:], bid[:]) < 0)
		if (ri && !bi) || (ri == bi && earlier) {
			best = i
		}
	}
	return &roots[best]
}
