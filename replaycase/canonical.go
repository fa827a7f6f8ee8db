package replaycase

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// The canonical form (docs/canonical-form.md): a case travels as OTLP spans, so that any trace
// backend downstream of the processor can store and search it. The
// case span carries the case-level fields; each step is one span with the OTel GenAI semconv
// >= 1.37 attributes in structured form. What semconv lacks lives under replay.*.
const (
	AttrCaseID         = "replay.case_id"
	AttrSchemaVersion  = "replay.schema_version"
	AttrAdapterVersion = "replay.adapter_version"
	AttrStatus         = "replay.status"
	AttrReasons        = "replay.reasons"
	AttrReasonCodes    = "replay.reason_codes"
	AttrClosedBy       = "replay.closed_by"
	AttrSelectedBy     = "replay.selected_by"
	AttrConventions    = "replay.conventions"
	AttrServices       = "replay.services"
	AttrRootSpanID     = "replay.root_span_id"
	AttrSpanCount      = "replay.span_count"
	AttrEventCount     = "replay.event_count"
	AttrToolCalls      = "replay.tool_calls"
	AttrRetrievalRefs  = "replay.retrieval_refs"
	AttrMetadata       = "replay.metadata"
	AttrAssertions     = "replay.assertions"
	AttrScrubPolicy    = "replay.scrub.policy_hash"
	AttrScrubCounts    = "replay.scrub.counts"
	AttrRawSpans       = "replay.raw_spans"
	AttrRawEvents      = "replay.raw_events"
	AttrToolChoice     = "replay.tool_choice"
	AttrResponseFormat = "replay.response_format"
	AttrReasoning      = "replay.reasoning_effort"
	AttrReasoningSum   = "replay.reasoning_summary"
	AttrThinking       = "replay.thinking"
	AttrParallelTools  = "replay.parallel_tool_calls"
	AttrVerbosity      = "replay.verbosity"
	AttrLogitBias      = "replay.logit_bias"
	AttrTotalTokens    = "replay.usage.total_tokens"
	AttrStepIndex      = "replay.step.index"
	AttrCallSiteID     = "replay.call_site_id"
	AttrCallSiteFields = "replay.call_site_fields"
	AttrStepKind       = "replay.step.kind"
	AttrStepService    = "replay.step.service_name"
	AttrRetrievalDocs  = "gen_ai.retrieval.documents"
)

// The attributes a case span and a step span usually carry, to size their maps once: in the
// fixtures' cases 27-29 on a case span, 21-23 on a model call's, 9-10 on a tool call's or a
// retrieval's (which have no messages, model configuration or usage).
const (
	caseSpanAttrs      = 32
	modelCallSpanAttrs = 24
	otherStepSpanAttrs = 12
)

// Encode appends the canonical spans of c to td: one resource per case (the root service),
// the case span first, then one span per step.
func Encode(c *Case, td ptrace.Traces) error {
	rs := td.ResourceSpans().AppendEmpty()
	res := rs.Resource().Attributes()
	res.PutStr("service.name", c.Provenance.ServiceName)
	if c.Provenance.ServiceVersion != "" {
		res.PutStr("service.version", c.Provenance.ServiceVersion)
	}
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("github.com/reprise-dev/reprise/replay_case")
	ss.Scope().SetVersion(c.AdapterVersion)

	tid, err := traceIDFromHex(c.Provenance.TraceID)
	if err != nil {
		return err
	}
	root := ss.Spans().AppendEmpty()
	root.SetTraceID(tid)
	root.SetSpanID(caseSpanID(c))
	root.SetName(caseSpanName(c))
	root.SetKind(ptrace.SpanKindInternal)
	root.SetStartTimestamp(timestamp(c.StartTime))
	root.SetEndTimestamp(timestamp(c.EndTime))
	a := root.Attributes()
	a.EnsureCapacity(caseSpanAttrs) // one allocation instead of the slice growing attribute by attribute
	a.PutStr(AttrCaseID, c.CaseID)
	a.PutStr(AttrSchemaVersion, c.SchemaVersion)
	a.PutStr(AttrAdapterVersion, c.AdapterVersion)
	a.PutStr(AttrStatus, string(c.Status))
	putJSON(a, AttrReasons, c.Reasons)
	codes, seen := a.PutEmptySlice(AttrReasonCodes), map[string]bool{}
	for _, r := range c.Reasons {
		if !seen[r.Code] {
			seen[r.Code] = true
			codes.AppendEmpty().SetStr(r.Code)
		}
	}
	a.PutStr(AttrClosedBy, string(c.ClosedBy))
	putStr(a, AttrSelectedBy, c.SelectedBy)
	putStrings(a, AttrConventions, c.Provenance.Conventions)
	putStrings(a, AttrServices, c.Provenance.Services)
	a.PutStr(AttrRootSpanID, c.Provenance.RootSpanID)
	a.PutInt(AttrSpanCount, c.Provenance.SpanCount)
	a.PutInt(AttrEventCount, c.Provenance.EventCount)
	a.PutStr("gen_ai.operation.name", "invoke_agent")
	putStr(a, "gen_ai.agent.name", c.AgentName)
	putStr(a, "gen_ai.conversation.id", c.ConversationID)
	putJSON(a, "gen_ai.input.messages", c.InputMessages)
	if c.FinalOutput != nil {
		putJSON(a, "gen_ai.output.messages", []Message{*c.FinalOutput})
	}
	putJSON(a, "gen_ai.tool.definitions", c.ToolDefinitions)
	putModelConfig(a, c.ModelConfig)
	putUsage(a, &c.Usage)
	putJSON(a, AttrToolCalls, c.ToolCalls)
	putJSON(a, AttrRetrievalRefs, c.RetrievalRefs)
	putJSON(a, AttrMetadata, c.Metadata)
	putJSON(a, AttrAssertions, c.Assertions)
	putStr(a, AttrScrubPolicy, c.Scrub.PolicyHash)
	putJSON(a, AttrScrubCounts, c.Scrub.Counts)
	putCaseExtras(a, c)
	if len(c.RawSpans) > 0 {
		a.PutEmptyBytes(AttrRawSpans).FromRaw(c.RawSpans)
	}
	if len(c.RawEvents) > 0 {
		a.PutEmptyBytes(AttrRawEvents).FromRaw(c.RawEvents)
	}
	if c.Status == StatusQuarantined {
		root.Status().SetCode(ptrace.StatusCodeError)
		root.Status().SetMessage("quarantined")
	}

	for i := range c.Steps {
		if err := encodeStep(c, &c.Steps[i], tid, root.SpanID(), ss.Spans().AppendEmpty()); err != nil {
			return err
		}
	}
	return nil
}

func encodeStep(c *Case, st *Step, tid pcommon.TraceID, caseSpan pcommon.SpanID, sp ptrace.Span) error {
	sp.SetTraceID(tid)
	id, err := spanIDFromHex(st.SpanID)
	if err != nil {
		return fmt.Errorf("step %d: %w", st.Index, err)
	}
	sp.SetSpanID(id)
	parent := caseSpan
	if st.ParentSpanID != "" {
		if parent, err = spanIDFromHex(st.ParentSpanID); err != nil {
			return fmt.Errorf("step %d: %w", st.Index, err)
		}
	}
	sp.SetParentSpanID(parent)
	sp.SetName(st.Name)
	sp.SetStartTimestamp(timestamp(st.StartTime))
	sp.SetEndTimestamp(timestamp(st.EndTime))
	switch st.Kind {
	case StepLLM, StepEmbedding, StepRetrieval:
		sp.SetKind(ptrace.SpanKindClient)
	default:
		sp.SetKind(ptrace.SpanKindInternal)
	}
	switch st.Status {
	case StepOK:
		sp.Status().SetCode(ptrace.StatusCodeOk)
	case StepError:
		sp.Status().SetCode(ptrace.StatusCodeError)
		sp.Status().SetMessage(st.Error)
	}
	a := sp.Attributes()
	if st.Kind == StepLLM || st.Kind == StepEmbedding {
		a.EnsureCapacity(modelCallSpanAttrs)
	} else {
		a.EnsureCapacity(otherStepSpanAttrs)
	}
	a.PutStr(AttrCaseID, c.CaseID)
	a.PutInt(AttrStepIndex, int64(st.Index))
	a.PutStr(AttrStepKind, string(st.Kind))
	a.PutStr(AttrStepService, st.ServiceName)
	putStrings(a, AttrConventions, st.Conventions)
	a.PutStr("gen_ai.operation.name", st.Operation)
	putStr(a, "error.type", st.Error)
	putModelConfig(a, st.ModelConfig)
	putJSON(a, "gen_ai.system_instructions", st.SystemInstructions)
	putJSON(a, "gen_ai.input.messages", st.InputMessages)
	putJSON(a, "gen_ai.output.messages", st.OutputMessages)
	putJSON(a, "gen_ai.tool.definitions", st.ToolDefinitions)
	putStr(a, "gen_ai.response.id", st.ResponseID)
	putStr(a, AttrCallSiteID, st.CallSiteID)
	putStrings(a, AttrCallSiteFields, st.CallSiteFields)
	putStrings(a, "gen_ai.response.finish_reasons", st.FinishReasons)
	putUsage(a, &st.Usage)
	putStr(a, "gen_ai.agent.name", st.AgentName)
	putStepExtras(a, st)
	if tc := st.ToolCall; tc != nil {
		a.PutStr("gen_ai.tool.name", tc.Name)
		a.PutStr("gen_ai.tool.call.id", tc.ID)
		a.PutStr("gen_ai.tool.call.arguments", tc.Arguments)
		a.PutStr("gen_ai.tool.call.result", tc.Result)
		putStr(a, "replay.tool.requested_by", tc.RequestedBy)
	}
	if r := st.Retrieval; r != nil {
		a.PutStr("gen_ai.data_source.id", r.DataSource)
		a.PutStr("gen_ai.retrieval.query.text", r.Query)
		if r.TopK != nil {
			a.PutInt("gen_ai.retrieval.top_k", *r.TopK)
		}
		putJSON(a, AttrRetrievalDocs, r.Documents)
		if len(r.Documents) == 0 { // putJSON leaves an empty list out; the retrieval must still be there
			a.PutEmptySlice(AttrRetrievalDocs)
		}
	}
	return nil
}

// Decode rebuilds every case in td from its canonical spans. Spans that are not canonical
// (no replay.case_id) are ignored.
func Decode(td ptrace.Traces) ([]*Case, error) {
	byID := map[string]*Case{} // the case each id's spans go to now
	var order []*Case
	// steps is how many spans follow in the scope: Encode writes a case's span and then its
	// steps into one scope, so that sizes the case's steps once instead of growing them. A case
	// span of an id whose case already has one starts another case: two cases of one id in a
	// batch (a request with an all-zero trace id sent twice) stay two, not one with every step
	// twice.
	get := func(id string, steps int, caseSpan bool) *Case {
		c, ok := byID[id]
		if !ok || (caseSpan && c.SchemaVersion != "") {
			c = &Case{CaseID: id, Steps: make([]Step, 0, steps)}
			byID[id] = c
			order = append(order, c)
		}
		return c
	}
	for i := 0; i < td.ResourceSpans().Len(); i++ {
		rs := td.ResourceSpans().At(i)
		for j := 0; j < rs.ScopeSpans().Len(); j++ {
			spans := rs.ScopeSpans().At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				sp := spans.At(k)
				id, ok := sp.Attributes().Get(AttrCaseID)
				if !ok {
					continue
				}
				_, isStep := sp.Attributes().Get(AttrStepIndex)
				c := get(id.Str(), spans.Len()-k-1, !isStep)
				var err error
				if isStep {
					err = decodeStep(c, sp)
				} else {
					err = decodeCase(c, rs.Resource().Attributes(), sp)
				}
				if err != nil {
					return nil, fmt.Errorf("case %s, span %s: %w", c.CaseID, sp.SpanID(), err)
				}
			}
		}
	}
	out := make([]*Case, 0, len(order))
	for _, c := range order {
		if c.SchemaVersion == "" {
			return nil, fmt.Errorf("case %s: steps without a case span", c.CaseID)
		}
		if len(c.Steps) == 0 {
			c.Steps = nil // as before the capacity hint: a case without steps decodes with none
		}
		sort.SliceStable(c.Steps, func(a, b int) bool { return c.Steps[a].Index < c.Steps[b].Index })
		out = append(out, c)
	}
	return out, nil
}

func decodeCase(c *Case, res pcommon.Map, sp ptrace.Span) error {
	a := sp.Attributes()
	c.SchemaVersion = str(a, AttrSchemaVersion)
	if c.SchemaVersion != SchemaVersion {
		return fmt.Errorf("unsupported %s %q (this build reads %q)", AttrSchemaVersion, c.SchemaVersion, SchemaVersion)
	}
	c.AdapterVersion = str(a, AttrAdapterVersion)
	c.Status = Status(str(a, AttrStatus))
	c.ClosedBy = CloseCause(str(a, AttrClosedBy))
	c.SelectedBy = str(a, AttrSelectedBy)
	c.StartTime = UnixNanoUTC(sp.StartTimestamp())
	c.EndTime = UnixNanoUTC(sp.EndTimestamp())
	c.Provenance = Provenance{
		TraceID:        sp.TraceID().String(),
		RootSpanID:     str(a, AttrRootSpanID),
		ServiceName:    str(res, "service.name"),
		ServiceVersion: str(res, "service.version"),
		Services:       strs(a, AttrServices),
		Conventions:    strs(a, AttrConventions),
		SpanCount:      integer(a, AttrSpanCount),
		EventCount:     integer(a, AttrEventCount),
	}
	c.AgentName = str(a, "gen_ai.agent.name")
	c.Scrub.PolicyHash = str(a, AttrScrubPolicy)
	c.ConversationID = str(a, "gen_ai.conversation.id")
	c.ModelConfig = modelConfig(a)
	readUsage(a, &c.Usage)
	var final []Message
	errs := []error{
		getJSON(a, AttrReasons, &c.Reasons),
		getJSON(a, "gen_ai.input.messages", &c.InputMessages),
		getJSON(a, "gen_ai.output.messages", &final),
		getJSON(a, "gen_ai.tool.definitions", &c.ToolDefinitions),
		getJSON(a, AttrToolCalls, &c.ToolCalls),
		getJSON(a, AttrRetrievalRefs, &c.RetrievalRefs),
		getJSON(a, AttrMetadata, &c.Metadata),
		getJSON(a, AttrAssertions, &c.Assertions),
		getJSON(a, AttrScrubCounts, &c.Scrub.Counts),
		getCaseExtras(a, c),
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	if len(final) > 0 {
		c.FinalOutput = &final[0]
	}
	if raw, ok := a.Get(AttrRawSpans); ok && raw.Type() == pcommon.ValueTypeBytes {
		c.RawSpans = raw.Bytes().AsRaw()
	}
	if raw, ok := a.Get(AttrRawEvents); ok && raw.Type() == pcommon.ValueTypeBytes {
		c.RawEvents = raw.Bytes().AsRaw()
	}
	return nil
}

// decodeStep appends the step sp encodes to c's steps. It fills the step in place: the
// JSON-valued fields are decoded through pointers to them, which would move a local Step (a
// large struct) to the heap, once per step, only to be copied into c.Steps. On an error c is
// left with a partial step; Decode then returns no case at all.
func decodeStep(c *Case, sp ptrace.Span) error {
	a := sp.Attributes()
	c.Steps = append(c.Steps, Step{})
	st := &c.Steps[len(c.Steps)-1]
	*st = Step{
		Index:          int(integer(a, AttrStepIndex)),
		Kind:           StepKind(str(a, AttrStepKind)),
		Operation:      str(a, "gen_ai.operation.name"),
		Name:           sp.Name(),
		SpanID:         sp.SpanID().String(),
		ParentSpanID:   sp.ParentSpanID().String(),
		ServiceName:    str(a, AttrStepService),
		StartTime:      UnixNanoUTC(sp.StartTimestamp()),
		EndTime:        UnixNanoUTC(sp.EndTimestamp()),
		Status:         StepUnset,
		Error:          str(a, "error.type"),
		Conventions:    strs(a, AttrConventions),
		ModelConfig:    modelConfig(a),
		ResponseID:     str(a, "gen_ai.response.id"),
		CallSiteID:     str(a, AttrCallSiteID),
		CallSiteFields: strs(a, AttrCallSiteFields),
		FinishReasons:  strs(a, "gen_ai.response.finish_reasons"),
		AgentName:      str(a, "gen_ai.agent.name"),
	}
	readUsage(a, &st.Usage)
	switch sp.Status().Code() {
	case ptrace.StatusCodeOk:
		st.Status = StepOK
	case ptrace.StatusCodeError:
		st.Status = StepError
	}
	for _, err := range []error{
		getJSON(a, "gen_ai.system_instructions", &st.SystemInstructions),
		getJSON(a, "gen_ai.input.messages", &st.InputMessages),
		getJSON(a, "gen_ai.output.messages", &st.OutputMessages),
		getJSON(a, "gen_ai.tool.definitions", &st.ToolDefinitions),
		getStepExtras(a, st),
	} {
		if err != nil {
			return err
		}
	}
	if _, ok := a.Get("gen_ai.tool.call.id"); ok {
		st.ToolCall = &ToolCall{
			ID: str(a, "gen_ai.tool.call.id"), Name: str(a, "gen_ai.tool.name"),
			Arguments: str(a, "gen_ai.tool.call.arguments"), Result: str(a, "gen_ai.tool.call.result"),
			Error: st.Error, RequestedBy: str(a, "replay.tool.requested_by"), SpanID: st.SpanID,
		}
	}
	if _, ok := a.Get(AttrRetrievalDocs); ok {
		st.Retrieval = &Retrieval{DataSource: str(a, "gen_ai.data_source.id"), Query: str(a, "gen_ai.retrieval.query.text"), SpanID: st.SpanID}
		if v, ok := a.Get("gen_ai.retrieval.top_k"); ok {
			k := v.Int()
			st.Retrieval.TopK = &k
		}
		if err := getJSON(a, AttrRetrievalDocs, &st.Retrieval.Documents); err != nil {
			return err
		}
		if st.Retrieval.Documents == nil {
			st.Retrieval.Documents = []Document{}
		}
	}
	return nil
}

// caseSpanID is the root span id, or for a case without a root a synthetic id from the case id.
func caseSpanID(c *Case) pcommon.SpanID {
	if id, err := spanIDFromHex(c.Provenance.RootSpanID); err == nil && !id.IsEmpty() {
		return id
	}
	var id pcommon.SpanID
	b, _ := hex.DecodeString(c.CaseID)
	copy(id[:], b)
	return id
}

func caseSpanName(c *Case) string {
	if c.AgentName != "" {
		return "invoke_agent " + c.AgentName
	}
	return "invoke_agent"
}

func putModelConfig(a pcommon.Map, m ModelConfig) {
	putStr(a, "gen_ai.provider.name", m.Provider)
	putStr(a, "gen_ai.request.model", m.RequestModel)
	putStr(a, "gen_ai.response.model", m.ResponseModel)
	putDouble(a, "gen_ai.request.temperature", m.Temperature)
	putDouble(a, "gen_ai.request.top_p", m.TopP)
	putInt(a, "gen_ai.request.max_tokens", m.MaxTokens)
	putInt(a, "gen_ai.request.seed", m.Seed)
	putStrings(a, "gen_ai.request.stop_sequences", m.Stop)
	putStr(a, AttrToolChoice, m.ToolChoice)
	putInt(a, "gen_ai.request.top_k", m.TopK)
	putDouble(a, "gen_ai.request.frequency_penalty", m.FrequencyPenalty)
	putDouble(a, "gen_ai.request.presence_penalty", m.PresencePenalty)
	putInt(a, "gen_ai.request.choice.count", m.ChoiceCount)
	putStr(a, "gen_ai.output.type", m.OutputType)
	putStr(a, AttrResponseFormat, m.ResponseFormat)
	putStr(a, AttrReasoning, m.ReasoningEffort)
	putStr(a, AttrReasoningSum, m.ReasoningSummary)
	putStr(a, AttrThinking, m.Thinking)
	if m.ParallelToolCalls != nil {
		a.PutBool(AttrParallelTools, *m.ParallelToolCalls)
	}
	putStr(a, AttrVerbosity, m.Verbosity)
	putStr(a, AttrLogitBias, m.LogitBias)
}

func modelConfig(a pcommon.Map) ModelConfig {
	return ModelConfig{
		Provider:          str(a, "gen_ai.provider.name"),
		RequestModel:      str(a, "gen_ai.request.model"),
		ResponseModel:     str(a, "gen_ai.response.model"),
		Temperature:       recorded(a, "gen_ai.request.temperature", pcommon.Value.Double),
		TopP:              recorded(a, "gen_ai.request.top_p", pcommon.Value.Double),
		MaxTokens:         recorded(a, "gen_ai.request.max_tokens", pcommon.Value.Int),
		Seed:              recorded(a, "gen_ai.request.seed", pcommon.Value.Int),
		Stop:              strs(a, "gen_ai.request.stop_sequences"),
		ToolChoice:        str(a, AttrToolChoice),
		TopK:              recorded(a, "gen_ai.request.top_k", pcommon.Value.Int),
		FrequencyPenalty:  recorded(a, "gen_ai.request.frequency_penalty", pcommon.Value.Double),
		PresencePenalty:   recorded(a, "gen_ai.request.presence_penalty", pcommon.Value.Double),
		ChoiceCount:       recorded(a, "gen_ai.request.choice.count", pcommon.Value.Int),
		OutputType:        str(a, "gen_ai.output.type"),
		ResponseFormat:    str(a, AttrResponseFormat),
		ReasoningEffort:   str(a, AttrReasoning),
		ReasoningSummary:  str(a, AttrReasoningSum),
		Thinking:          str(a, AttrThinking),
		ParallelToolCalls: recorded(a, AttrParallelTools, pcommon.Value.Bool),
		Verbosity:         str(a, AttrVerbosity),
		LogitBias:         str(a, AttrLogitBias),
	}
}

// putDouble and putInt write a parameter that was recorded (not nil); recorded reads it back
// with get (pcommon.Value.Double or .Int), nil when the attribute is absent.
func putDouble(a pcommon.Map, key string, v *float64) {
	if v != nil {
		a.PutDouble(key, *v)
	}
}

func putInt(a pcommon.Map, key string, v *int64) {
	if v != nil {
		a.PutInt(key, *v)
	}
}

func recorded[T any](a pcommon.Map, key string, get func(pcommon.Value) T) *T {
	v, ok := a.Get(key)
	if !ok {
		return nil
	}
	x := get(v)
	return &x
}

var usageAttrs = []struct {
	key string
	get func(*Usage) *int64
}{
	{"gen_ai.usage.input_tokens", func(u *Usage) *int64 { return &u.InputTokens }},
	{"gen_ai.usage.output_tokens", func(u *Usage) *int64 { return &u.OutputTokens }},
	{"gen_ai.usage.cache_read.input_tokens", func(u *Usage) *int64 { return &u.CacheReadInputTokens }},
	{"gen_ai.usage.cache_write.input_tokens", func(u *Usage) *int64 { return &u.CacheWriteInputTokens }},
	{"gen_ai.usage.reasoning.output_tokens", func(u *Usage) *int64 { return &u.ReasoningOutputTokens }},
	{AttrTotalTokens, func(u *Usage) *int64 { return &u.TotalTokens }},
}

// putUsage takes the usage by pointer: a copy would escape to the heap through the getters.
func putUsage(a pcommon.Map, u *Usage) {
	for _, f := range usageAttrs {
		if n := *f.get(u); n != 0 {
			a.PutInt(f.key, n)
		}
	}
}

// readUsage fills u, in place for the same reason putUsage takes a pointer.
func readUsage(a pcommon.Map, u *Usage) {
	for _, f := range usageAttrs {
		*f.get(u) = integer(a, f.key)
	}
}

// putJSON stores v as a structured value. Empty values are left out.
func putJSON(a pcommon.Map, key string, v any) {
	rv := reflect.ValueOf(v)
	if !rv.IsValid() || rv.IsZero() || ((rv.Kind() == reflect.Slice || rv.Kind() == reflect.Map) && rv.Len() == 0) {
		return
	}
	putValue(a.PutEmpty(key), rv)
}

// getJSON decodes the structured attribute key into out (a pointer to a zero value) as
// json.Unmarshal of the attribute's JSON does: straight from pdata when the value has the shape
// putValue writes (getValue), else through its JSON text.
func getJSON(a pcommon.Map, key string, out any) error {
	v, ok := a.Get(key)
	if !ok {
		return nil
	}
	// Straight into out, which is zero: a value getValue leaves to the JSON text may have
	// filled part of it, so out is zeroed again before that.
	if dst := reflect.ValueOf(out).Elem(); dst.IsZero() {
		if getValue(v, dst) == nil {
			return nil
		}
		dst.SetZero()
	}
	return getJSONText(v, key, out)
}

// getJSONText decodes v through its JSON text, for the values getValue leaves to it.
func getJSONText(v pcommon.Value, key string, out any) error {
	buf := jsonBuffers.Get().(*[]byte)
	b, err := appendValueJSON((*buf)[:0], v)
	defer func() {
		if cap(b) <= maxPooledJSON { // a multi-megabyte tool result is not worth keeping
			*buf = b
			jsonBuffers.Put(buf)
		}
	}()
	if err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	return nil
}

func putStr(a pcommon.Map, key, v string) {
	if v != "" {
		a.PutStr(key, v)
	}
}

func putStrings(a pcommon.Map, key string, vs []string) {
	if len(vs) == 0 {
		return
	}
	s := a.PutEmptySlice(key)
	for _, v := range vs {
		s.AppendEmpty().SetStr(v)
	}
}

func str(a pcommon.Map, key string) string {
	if v, ok := a.Get(key); ok {
		return v.AsString()
	}
	return ""
}

func strs(a pcommon.Map, key string) []string {
	v, ok := a.Get(key)
	if !ok || v.Type() != pcommon.ValueTypeSlice {
		return nil
	}
	out := make([]string, v.Slice().Len())
	for i := range out {
		out[i] = v.Slice().At(i).AsString()
	}
	return out
}

func integer(a pcommon.Map, key string) int64 {
	if v, ok := a.Get(key); ok && v.Type() == pcommon.ValueTypeInt {
		return v.Int()
	}
	return 0
}

func traceIDFromHex(s string) (pcommon.TraceID, error) {
	var id pcommon.TraceID
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != len(id) {
		return id, fmt.Errorf("invalid trace id %q", s)
	}
	copy(id[:], b)
	return id, nil
}

func spanIDFromHex(s string) (pcommon.SpanID, error) {
	var id pcommon.SpanID
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != len(id) {
		return id, fmt.Errorf("invalid span id %q", s)
	}
	copy(id[:], b)
	return id, nil
}

// UnixNanoUTC converts an OTLP timestamp to UTC time; a zero timestamp stays the zero time.
func UnixNanoUTC(ts pcommon.Timestamp) time.Time {
	if ts == 0 {
		return time.Time{}
	}
	return ts.AsTime().UTC()
}

func timestamp(t time.Time) pcommon.Timestamp {
	if t.IsZero() {
		return 0
	}
	return pcommon.NewTimestampFromTime(t)
}
