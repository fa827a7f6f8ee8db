// Package replaycase is the one model of a replay case shared by every Reprise component.
//
// A case is one agent run (one trace): what the agent was asked, what it retrieved, which tools
// it called with which arguments and results, what the model answered and what it cost, plus a
// verdict (accepted or quarantined, with machine-readable reasons). docs/case-model.md documents
// every field; canonical.go converts a case to and from the OTLP form that travels between
// components, which never share Go values across the pipeline.
package replaycase

import (
	"crypto/sha256"
	"encoding/hex"
	"math"
	"strings"
	"time"
)

// SchemaVersion names the shape of a case. Later versions only add optional fields.
const SchemaVersion = "replay-case.v1"

// Status is the verdict on a case.
type Status string

const (
	StatusAccepted    Status = "accepted"
	StatusQuarantined Status = "quarantined"
)

// CloseCause says why the processor stopped waiting for more spans of a case.
type CloseCause string

const (
	ClosedRootEnded CloseCause = "root_ended"   // the root span arrived and the grace period passed
	ClosedIdle      CloseCause = "idle_timeout" // no span or event arrived for idle_timeout
	ClosedMaxAge    CloseCause = "max_age"      // the case was open for max_age
	ClosedEvicted   CloseCause = "evicted"      // a memory limit closed it early
	ClosedSpanLimit CloseCause = "span_limit"   // it reached max_spans_per_trace
	ClosedShutdown  CloseCause = "shutdown"     // the collector shut down
)

// ClosedInvalidTraceID: spans without a trace id cannot be grouped, so the spans of one request
// that have none are closed into one case at once.
const ClosedInvalidTraceID CloseCause = "invalid_trace_id"

// StepKind classifies a step.
type StepKind string

const (
	StepLLM       StepKind = "llm"
	StepTool      StepKind = "tool"
	StepRetrieval StepKind = "retrieval"
	StepEmbedding StepKind = "embedding"
	StepAgent     StepKind = "agent" // a nested agent invocation (the root agent is the case itself)
)

// The provider APIs a model or embedding step can have called (Step.API). The replay endpoint
// that serves a step is the one of its API.
const (
	APIOpenAIChatCompletions = "openai.chat_completions"
	APIOpenAIResponses       = "openai.responses"
	APIAnthropicMessages     = "anthropic.messages"
	APIOpenAIEmbeddings      = "openai.embeddings"
)

// Case is one agent run. JSON names are the dataset column names.
type Case struct {
	CaseID         string     `json:"case_id" parquet:"case_id"`
	SchemaVersion  string     `json:"schema_version" parquet:"schema_version,dict"`
	AdapterVersion string     `json:"adapter_version" parquet:"adapter_version,dict"`
	Status         Status     `json:"status" parquet:"status,dict"`
	Reasons        []Reason   `json:"reasons" parquet:"reasons,list"`
	ClosedBy       CloseCause `json:"closed_by" parquet:"closed_by,dict"`
	// SelectedBy is why the run became a case: the name of the processor's select rule that
	// matched it, "error:<rule>", "sample", or "span_limit" (a part of a run cut at the span
	// limit that a later part may match). Empty when the processor keeps every run (no select
	// config).
	SelectedBy string     `json:"selected_by,omitempty" parquet:"selected_by,optional,dict"`
	Provenance Provenance `json:"provenance" parquet:"provenance"`
	StartTime  time.Time  `json:"start_time" parquet:"start_time,timestamp(microsecond)"`
	EndTime    time.Time  `json:"end_time" parquet:"end_time,timestamp(microsecond)"`

	AgentName       string            `json:"agent_name" parquet:"agent_name,optional,dict"`
	ConversationID  string            `json:"conversation_id" parquet:"conversation_id,optional"`
	InputMessages   []Message         `json:"input_messages" parquet:"input_messages,list"`
	FinalOutput     *Message          `json:"final_output" parquet:"final_output,optional"`
	ModelConfig     ModelConfig       `json:"model_config" parquet:"model_config"`
	ToolDefinitions []ToolDefinition  `json:"tool_definitions" parquet:"tool_definitions,list"`
	ToolCalls       []ToolCall        `json:"tool_calls" parquet:"tool_calls,list"`
	RetrievalRefs   []Retrieval       `json:"retrieval_refs" parquet:"retrieval_refs,list"`
	Usage           Usage             `json:"usage" parquet:"usage"`
	Assertions      map[string]string `json:"assertions" parquet:"assertions"`
	Metadata        map[string]string `json:"metadata" parquet:"metadata"`
	Steps           []Step            `json:"steps" parquet:"steps,list"`
	// Scrub says what the scrub policy replaced in this case's telemetry.
	Scrub ScrubReport `json:"scrub" parquet:"scrub"`

	// RawSpans is the OTLP protobuf (ptrace.ProtoMarshaler) of every span the case was built from, kept so a case can be re-driven. The processor fills it for
	// quarantined cases by default (config raw_spans).
	RawSpans []byte `json:"raw_spans,omitempty" parquet:"raw_spans,optional"`
	// RawEvents is the OTLP protobuf (plog.ProtoMarshaler) of the GenAI log events joined into
	// the case, kept alongside RawSpans.
	RawEvents []byte `json:"raw_events,omitempty" parquet:"raw_events,optional"`

	// WorkflowName names the workflow the run is (gen_ai.workflow.name of an invoke_workflow
	// root), empty when the run is not a workflow.
	WorkflowName string `json:"workflow_name,omitempty" parquet:"workflow_name,optional,dict"`
	// AgentInvocation says how the root agent was invoked: "client" over a remote service
	// (OpenAI Assistants, Bedrock Agents: the agent's own steps are not in the trace) or
	// "internal" in the same process; empty when not recorded.
	AgentInvocation string `json:"agent_invocation,omitempty" parquet:"agent_invocation,optional,dict"`
	// Evaluations are the run's own scores: the gen_ai.evaluation.result events recorded with it.
	Evaluations []Evaluation `json:"evaluations,omitempty" parquet:"evaluations,list"`
	// Cost is the run's cost: the sum over its LLM and embedding steps (package pricing).
	Cost *Cost `json:"cost,omitempty" parquet:"cost,optional"`

	// Resent marks a case the processor rebuilt after a restart from write-ahead records alone:
	// the records were still stored, so the case may have been written just before the crash
	// (the write and the release are not one step). A writer that adopted the segment holding
	// it drops it (dataset/resent.go). It travels as replay.case.resent and is never stored.
	Resent bool `json:"-" parquet:"-"`
}

// ScrubReport is the scrub policy that was applied and what it replaced, by kind.
type ScrubReport struct {
	PolicyHash string           `json:"policy_hash,omitempty" parquet:"policy_hash,optional"`
	Counts     map[string]int64 `json:"counts" parquet:"counts"`
}

// Reason is one machine-readable cause of quarantine.
type Reason struct {
	Code   string `json:"code" parquet:"code,dict"`
	Detail string `json:"detail" parquet:"detail,optional"`
	SpanID string `json:"span_id,omitempty" parquet:"span_id,optional"`
}

// Provenance says where a case came from.
type Provenance struct {
	TraceID        string   `json:"trace_id" parquet:"trace_id"`
	RootSpanID     string   `json:"root_span_id" parquet:"root_span_id,optional"`
	ServiceName    string   `json:"service_name" parquet:"service_name,optional,dict"`
	ServiceVersion string   `json:"service_version" parquet:"service_version,optional,dict"`
	Services       []string `json:"services" parquet:"services,list"`
	Conventions    []string `json:"conventions" parquet:"conventions,list"`
	SpanCount      int64    `json:"span_count" parquet:"span_count"`
	EventCount     int64    `json:"event_count" parquet:"event_count"`
}

// Message is one chat message in the OTel GenAI (semconv >= 1.37) parts form.
type Message struct {
	Role         string `json:"role" parquet:"role,dict"`
	Name         string `json:"name,omitempty" parquet:"name,optional"`
	FinishReason string `json:"finish_reason,omitempty" parquet:"finish_reason,optional,dict"`
	Parts        []Part `json:"parts" parquet:"parts,list"`
}

// Part is one part of a message. Type is text, tool_call, tool_call_response, reasoning, blob,
// uri, file or whatever the emitter wrote. Arguments and Response keep the recorded text: a JSON
// string stays byte for byte; a structured value is stored as its JSON encoding.
type Part struct {
	Type      string `json:"type" parquet:"type,dict"`
	Content   string `json:"content,omitempty" parquet:"content,optional"`
	ID        string `json:"id,omitempty" parquet:"id,optional"`
	Name      string `json:"name,omitempty" parquet:"name,optional"`
	Arguments string `json:"arguments,omitempty" parquet:"arguments,optional"`
	Response  string `json:"response,omitempty" parquet:"response,optional"`
	MimeType  string `json:"mime_type,omitempty" parquet:"mime_type,optional,dict"`
	Modality  string `json:"modality,omitempty" parquet:"modality,optional,dict"`
	URI       string `json:"uri,omitempty" parquet:"uri,optional"`
	FileID    string `json:"file_id,omitempty" parquet:"file_id,optional"`
	// ItemID is the provider's own id of the output item that carried this part, when the
	// telemetry recorded it: an OpenAI Responses function_call item (fc_…) for a tool call, a
	// message item (msg_…) for its text. The replay answers with it; ID stays the call id.
	ItemID string `json:"item_id,omitempty" parquet:"item_id,optional"`
	// Error marks a tool_call_response the agent sent as a failure: Anthropic's tool_result
	// is_error. A request body records it, and so does the Vercel AI SDK's prompt (an error-text or
	// error-json output); false is "not an error or not recorded".
	Error bool `json:"is_error,omitempty" parquet:"is_error,optional"`
}

// ModelConfig is the model and the sampling parameters that were recorded. Nil pointers and
// empty strings mean "not recorded", never a default.
type ModelConfig struct {
	Provider      string   `json:"provider,omitempty" parquet:"provider,optional,dict"`
	RequestModel  string   `json:"request_model,omitempty" parquet:"request_model,optional,dict"`
	ResponseModel string   `json:"response_model,omitempty" parquet:"response_model,optional,dict"`
	Temperature   *float64 `json:"temperature,omitempty" parquet:"temperature,optional"`
	TopP          *float64 `json:"top_p,omitempty" parquet:"top_p,optional"`
	MaxTokens     *int64   `json:"max_tokens,omitempty" parquet:"max_tokens,optional"`
	Seed          *int64   `json:"seed,omitempty" parquet:"seed,optional"`
	Stop          []string `json:"stop,omitempty" parquet:"stop,list"`
	ToolChoice    string   `json:"tool_choice,omitempty" parquet:"tool_choice,optional"`
	// TopK is top-k sampling (Anthropic, Gemini, Vercel's topK, vLLM's extension of Chat).
	TopK             *int64   `json:"top_k,omitempty" parquet:"top_k,optional"`
	FrequencyPenalty *float64 `json:"frequency_penalty,omitempty" parquet:"frequency_penalty,optional"`
	PresencePenalty  *float64 `json:"presence_penalty,omitempty" parquet:"presence_penalty,optional"`
	// ChoiceCount is how many choices the request asked for (OpenAI's n).
	ChoiceCount *int64 `json:"choice_count,omitempty" parquet:"choice_count,optional"`
	// OutputType is the output the request asked for, as gen_ai.output.type names it: "text",
	// "json" (a JSON object or a JSON schema was asked for), "image", "speech".
	OutputType string `json:"output_type,omitempty" parquet:"output_type,optional,dict"`
	// ResponseFormat is the format object as sent (Chat Completions response_format, Responses
	// text.format), as compact JSON with sorted keys: the JSON schema a structured output asked
	// for. Empty when only OutputType (or nothing) was recorded.
	ResponseFormat string `json:"response_format,omitempty" parquet:"response_format,optional"`
	// ReasoningEffort is how hard a reasoning model was asked to think, as the API named it:
	// Chat Completions' reasoning_effort, the Responses API's reasoning.effort, Anthropic's
	// output_config.effort ("minimal", "low", "medium", "high", …).
	ReasoningEffort string `json:"reasoning_effort,omitempty" parquet:"reasoning_effort,optional,dict"`
	// ReasoningSummary is the summary of its reasoning the Responses API was asked for
	// (reasoning.summary: "auto", "concise", "detailed").
	ReasoningSummary string `json:"reasoning_summary,omitempty" parquet:"reasoning_summary,optional,dict"`
	// Thinking is Anthropic's thinking object as sent, compact JSON with sorted keys:
	// {"budget_tokens":2048,"type":"enabled"}, {"type":"adaptive"}, {"type":"disabled"}; or the
	// thinking switch an OpenAI-compatible provider took on Chat Completions, as sent: true,
	// "enabled".
	Thinking string `json:"thinking,omitempty" parquet:"thinking,optional"`
	// ParallelToolCalls is whether the model was let call several tools in one answer (Chat
	// Completions' and the Responses API's parallel_tool_calls); nil when not recorded.
	ParallelToolCalls *bool `json:"parallel_tool_calls,omitempty" parquet:"parallel_tool_calls,optional"`
	// Verbosity is how long an answer the model was asked for (Chat Completions' verbosity, the
	// Responses API's text.verbosity: "low", "medium", "high").
	Verbosity string `json:"verbosity,omitempty" parquet:"verbosity,optional,dict"`
	// LogitBias is Chat Completions' logit_bias as sent, compact JSON with sorted keys: token
	// ids to the bias added to their logits, {"50256":-100}.
	LogitBias string `json:"logit_bias,omitempty" parquet:"logit_bias,optional"`
}

// ToolDefinition is a tool offered to the model, in the flat semconv shape. Parameters is the
// JSON text of the parameters schema. Its texts are dictionary-encoded: an agent offers the same
// tools on every model call, so a file stores each schema once and a writer copies each once
// (docs/benchmarks.md, part 21).
type ToolDefinition struct {
	Type        string `json:"type" parquet:"type,dict"`
	Name        string `json:"name" parquet:"name,optional,dict"`
	Description string `json:"description,omitempty" parquet:"description,optional,dict"`
	Parameters  string `json:"parameters,omitempty" parquet:"parameters,optional,dict"`
}

// ToolCall is a tool the model asked for, joined with its execution by call id.
type ToolCall struct {
	ID          string `json:"id" parquet:"id,optional"`
	Name        string `json:"name" parquet:"name,optional"`
	Arguments   string `json:"arguments" parquet:"arguments,optional"`
	Result      string `json:"result" parquet:"result,optional"`
	Error       string `json:"error,omitempty" parquet:"error,optional"`
	RequestedBy string `json:"requested_by,omitempty" parquet:"requested_by,optional"` // span id of the LLM step that asked for it
	SpanID      string `json:"span_id,omitempty" parquet:"span_id,optional"`           // span id of the tool execution step
}

// Retrieval is one retrieval: the query and the documents it returned.
type Retrieval struct {
	DataSource string     `json:"data_source" parquet:"data_source,optional"`
	Query      string     `json:"query" parquet:"query,optional"`
	TopK       *int64     `json:"top_k,omitempty" parquet:"top_k,optional"`
	Documents  []Document `json:"documents" parquet:"documents,list"`
	SpanID     string     `json:"span_id,omitempty" parquet:"span_id,optional"`
}

// Document is one retrieved document.
type Document struct {
	ID      string   `json:"id" parquet:"id,optional"`
	Score   *float64 `json:"score,omitempty" parquet:"score,optional"`
	Content string   `json:"content,omitempty" parquet:"content,optional"`
}

// Usage counts tokens. InputTokens includes cached input tokens (the OTel rule).
type Usage struct {
	InputTokens           int64 `json:"input_tokens" parquet:"input_tokens"`
	OutputTokens          int64 `json:"output_tokens" parquet:"output_tokens"`
	CacheReadInputTokens  int64 `json:"cache_read_input_tokens" parquet:"cache_read_input_tokens"`
	CacheWriteInputTokens int64 `json:"cache_write_input_tokens" parquet:"cache_write_input_tokens"`
	ReasoningOutputTokens int64 `json:"reasoning_output_tokens" parquet:"reasoning_output_tokens"`
	TotalTokens           int64 `json:"total_tokens" parquet:"total_tokens"`
}

// Add sums u and o field by field.
func (u *Usage) Add(o Usage) {
	u.InputTokens = addTokens(u.InputTokens, o.InputTokens)
	u.OutputTokens = addTokens(u.OutputTokens, o.OutputTokens)
	u.CacheReadInputTokens = addTokens(u.CacheReadInputTokens, o.CacheReadInputTokens)
	u.CacheWriteInputTokens = addTokens(u.CacheWriteInputTokens, o.CacheWriteInputTokens)
	u.ReasoningOutputTokens = addTokens(u.ReasoningOutputTokens, o.ReasoningOutputTokens)
	u.TotalTokens = addTokens(u.TotalTokens, o.TotalTokens)
}

// addTokens adds two non-negative token counts, stopping at the largest int64 instead of
// wrapping to a negative count.
func addTokens(a, b int64) int64 {
	if b > 0 && a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// Step is one LLM call, tool execution, retrieval, embedding or nested agent, in start order.
type Step struct {
	Index     int      `json:"index" parquet:"index"`
	Kind      StepKind `json:"kind" parquet:"kind,dict"`
	Operation string   `json:"operation" parquet:"operation,optional,dict"`
	// API is the provider API an LLM or embedding step called (one of the API* constants),
	// empty when the telemetry does not tell it.
	API          string     `json:"api,omitempty" parquet:"api,optional,dict"`
	Name         string     `json:"name" parquet:"name,optional"`
	SpanID       string     `json:"span_id" parquet:"span_id,optional"`
	ParentSpanID string     `json:"parent_span_id" parquet:"parent_span_id,optional"`
	ServiceName  string     `json:"service_name" parquet:"service_name,optional,dict"`
	StartTime    time.Time  `json:"start_time" parquet:"start_time,timestamp(microsecond)"`
	EndTime      time.Time  `json:"end_time" parquet:"end_time,timestamp(microsecond)"`
	Status       StepStatus `json:"status" parquet:"status,dict"`
	Error        string     `json:"error,omitempty" parquet:"error,optional"`
	Conventions  []string   `json:"conventions" parquet:"conventions,list"`

	ModelConfig        ModelConfig      `json:"model_config" parquet:"model_config"`
	SystemInstructions []Part           `json:"system_instructions,omitempty" parquet:"system_instructions,list"`
	InputMessages      []Message        `json:"input_messages,omitempty" parquet:"input_messages,list"`
	OutputMessages     []Message        `json:"output_messages,omitempty" parquet:"output_messages,list"`
	ToolDefinitions    []ToolDefinition `json:"tool_definitions,omitempty" parquet:"tool_definitions,list"`
	ResponseID         string           `json:"response_id,omitempty" parquet:"response_id,optional"`
	// CallSiteID identifies the model request of an LLM step (package callsite,
	// docs/call-site-id.md); CallSiteFields names the optional request fields it covers.
	CallSiteID     string   `json:"call_site_id,omitempty" parquet:"call_site_id,optional"`
	CallSiteFields []string `json:"call_site_fields,omitempty" parquet:"call_site_fields,list"`
	FinishReasons  []string `json:"finish_reasons,omitempty" parquet:"finish_reasons,list"`
	Usage          Usage    `json:"usage" parquet:"usage"`

	ToolCall  *ToolCall  `json:"tool_call,omitempty" parquet:"tool_call,optional"`
	Retrieval *Retrieval `json:"retrieval,omitempty" parquet:"retrieval,optional"`
	AgentName string     `json:"agent_name,omitempty" parquet:"agent_name,optional,dict"`

	// WorkflowName is gen_ai.workflow.name of an invoke_workflow step.
	WorkflowName string `json:"workflow_name,omitempty" parquet:"workflow_name,optional,dict"`
	// AgentInvocation is "client" (a remote agent service) or "internal" (in process) for an
	// invoke_agent step, from its span kind.
	AgentInvocation string `json:"agent_invocation,omitempty" parquet:"agent_invocation,optional,dict"`
	// Exceptions are the gen_ai.client.operation.exception events of the step, in order.
	Exceptions []Exception `json:"exceptions,omitempty" parquet:"exceptions,list"`
	// Cost is what this LLM or embedding call cost (package pricing); nil for other kinds.
	Cost *Cost `json:"cost,omitempty" parquet:"cost,optional"`
	// Embeddings are the inputs of an embedding step with the vector returned for each, in
	// request order; empty when the telemetry recorded neither.
	Embeddings []Embedding `json:"embeddings,omitempty" parquet:"embeddings,list"`
}

// Embedding is one input text of an embedding call and the vector the model returned for it.
// Either is empty when the telemetry did not record it.
type Embedding struct {
	Text   string    `json:"text,omitempty" parquet:"text,optional"`
	Vector []float64 `json:"vector,omitempty" parquet:"vector,list"`
}

// StepStatus is the span status of a step.
type StepStatus string

const (
	StepUnset StepStatus = "unset"
	StepOK    StepStatus = "ok"
	StepError StepStatus = "error"
)

// ID returns the deterministic case id: the first 16 bytes, hex, of
// SHA-256("replay-case.v1\x00" + trace id hex + "\x00" + anchor span id hex), where the anchor
// is the root span id, or for a case without a root the smallest span id it holds. The same
// trace delivered twice gives the same id, so duplicates after a crash are recognisable.
func ID(traceID, anchorSpanID string) string {
	h := sha256.Sum256([]byte(SchemaVersion + "\x00" + traceID + "\x00" + anchorSpanID))
	return hex.EncodeToString(h[:16])
}

// IsID reports whether s has the form ID gives a case id, as the dataset stores it: 32
// lower-case hex digits.
func IsID(s string) bool {
	return len(s) == 32 && strings.Trim(s, "0123456789abcdef") == ""
}

// Quarantine marks the case quarantined with one more reason.
func (c *Case) Quarantine(code, detail, spanID string) {
	c.Status = StatusQuarantined
	c.Reasons = append(c.Reasons, Reason{Code: code, Detail: detail, SpanID: spanID})
}

// HasReason reports whether the case carries the reason code.
func (c *Case) HasReason(code string) bool {
	for _, r := range c.Reasons {
		if r.Code == code {
			return true
		}
	}
	return false
}

// Evaluation is one gen_ai.evaluation.result event: a score an evaluator gave the run or one
// of its responses.
type Evaluation struct {
	Name        string   `json:"name" parquet:"name,dict"`
	ScoreValue  *float64 `json:"score_value,omitempty" parquet:"score_value,optional"`
	ScoreLabel  string   `json:"score_label,omitempty" parquet:"score_label,optional,dict"`
	Explanation string   `json:"explanation,omitempty" parquet:"explanation,optional"`
	ResponseID  string   `json:"response_id,omitempty" parquet:"response_id,optional"` // the response evaluated, when the event names it
	ErrorType   string   `json:"error_type,omitempty" parquet:"error_type,optional"`   // the evaluation itself failed
	SpanID      string   `json:"span_id,omitempty" parquet:"span_id,optional"`         // the span the event was recorded on (the operation evaluated)
}

// Exception is one gen_ai.client.operation.exception event: an error that stopped a GenAI
// client operation (API error, rate limit, timeout).
type Exception struct {
	Type       string `json:"type,omitempty" parquet:"type,optional,dict"`
	Message    string `json:"message,omitempty" parquet:"message,optional"`
	Stacktrace string `json:"stacktrace,omitempty" parquet:"stacktrace,optional"`
}
