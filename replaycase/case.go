// Package replaycase is the one model of a replay case shared by every Reprise component.
//
// A case is one agent run (one trace): what the agent was asked, what it retrieved, which tools
// it called with which arguments and results, what the model answered and what it cost, plus a
// verdict (accepted or quarantined, with machine-readable reasons). docs/case-model.md documents
// every field; canonical.go converts a case to and from the OTLP form that travels between
// components (decision D1).
package replaycase

import (
	"crypto/sha256"
	"encoding/hex"
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
	ClosedReprocess CloseCause = "reprocessed"  // built again from stored telemetry (re-drive)
	ClosedUnknown   CloseCause = ""
)

// StepKind classifies a step.
type StepKind string

const (
	StepLLM       StepKind = "llm"
	StepTool      StepKind = "tool"
	StepRetrieval StepKind = "retrieval"
	StepEmbedding StepKind = "embedding"
	StepAgent     StepKind = "agent" // a nested agent invocation (the root agent is the case itself)
)

// Case is one agent run. JSON names are the dataset column names.
type Case struct {
	CaseID         string     `json:"case_id"`
	SchemaVersion  string     `json:"schema_version"`
	AdapterVersion string     `json:"adapter_version"`
	Status         Status     `json:"status"`
	Reasons        []Reason   `json:"reasons"`
	ClosedBy       CloseCause `json:"closed_by"`
	Provenance     Provenance `json:"provenance"`
	StartTime      time.Time  `json:"start_time"`
	EndTime        time.Time  `json:"end_time"`

	AgentName       string            `json:"agent_name"`
	ConversationID  string            `json:"conversation_id"`
	InputMessages   []Message         `json:"input_messages"`
	FinalOutput     *Message          `json:"final_output"`
	ModelConfig     ModelConfig       `json:"model_config"`
	ToolDefinitions []ToolDefinition  `json:"tool_definitions"`
	ToolCalls       []ToolCall        `json:"tool_calls"`
	RetrievalRefs   []Retrieval       `json:"retrieval_refs"`
	Usage           Usage             `json:"usage"`
	Assertions      map[string]string `json:"assertions"`
	Metadata        map[string]string `json:"metadata"`
	Steps           []Step            `json:"steps"`

	// RawSpans is the OTLP protobuf (ptrace.ProtoMarshaler) of every span the case was built from, kept so a case can be re-driven. The processor fills it for
	// quarantined cases by default (config raw_spans).
	RawSpans []byte `json:"raw_spans,omitempty"`
	// RawEvents is the OTLP protobuf (plog.ProtoMarshaler) of the GenAI log events joined into
	// the case, kept alongside RawSpans.
	RawEvents []byte `json:"raw_events,omitempty"`
}

// Reason is one machine-readable cause of quarantine.
type Reason struct {
	Code   string `json:"code"`
	Detail string `json:"detail"`
	SpanID string `json:"span_id,omitempty"`
}

// Provenance says where a case came from.
type Provenance struct {
	TraceID        string   `json:"trace_id"`
	RootSpanID     string   `json:"root_span_id"`
	ServiceName    string   `json:"service_name"`
	ServiceVersion string   `json:"service_version"`
	Services       []string `json:"services"`
	Conventions    []string `json:"conventions"`
	SpanCount      int64    `json:"span_count"`
	EventCount     int64    `json:"event_count"`
}

// Message is one chat message in the OTel GenAI (semconv >= 1.37) parts form.
type Message struct {
	Role         string `json:"role"`
	Name         string `json:"name,omitempty"`
	FinishReason string `json:"finish_reason,omitempty"`
	Parts        []Part `json:"parts"`
}

// Part is one part of a message. Type is text, tool_call, tool_call_response, reasoning, blob,
// uri, file or whatever the emitter wrote. Arguments and Response keep the recorded text: a JSON
// string stays byte for byte; a structured value is stored as its JSON encoding.
type Part struct {
	Type      string `json:"type"`
	Content   string `json:"content,omitempty"`
	ID        string `json:"id,omitempty"`
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments,omitempty"`
	Response  string `json:"response,omitempty"`
	MimeType  string `json:"mime_type,omitempty"`
	Modality  string `json:"modality,omitempty"`
	URI       string `json:"uri,omitempty"`
	FileID    string `json:"file_id,omitempty"`
}

// ModelConfig is the model and the sampling parameters that were recorded. Nil pointers and
// empty strings mean "not recorded", never a default.
type ModelConfig struct {
	Provider      string   `json:"provider,omitempty"`
	RequestModel  string   `json:"request_model,omitempty"`
	ResponseModel string   `json:"response_model,omitempty"`
	Temperature   *float64 `json:"temperature,omitempty"`
	TopP          *float64 `json:"top_p,omitempty"`
	MaxTokens     *int64   `json:"max_tokens,omitempty"`
	Seed          *int64   `json:"seed,omitempty"`
	Stop          []string `json:"stop,omitempty"`
	ToolChoice    string   `json:"tool_choice,omitempty"`
}

// ToolDefinition is a tool offered to the model, in the flat semconv shape. Parameters is the
// JSON text of the parameters schema.
type ToolDefinition struct {
	Type        string `json:"type"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Parameters  string `json:"parameters,omitempty"`
}

// ToolCall is a tool the model asked for, joined with its execution by call id.
type ToolCall struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Arguments   string `json:"arguments"`
	Result      string `json:"result"`
	Error       string `json:"error,omitempty"`
	RequestedBy string `json:"requested_by,omitempty"` // span id of the LLM step that asked for it
	SpanID      string `json:"span_id,omitempty"`      // span id of the tool execution step
}

// Retrieval is one retrieval: the query and the documents it returned.
type Retrieval struct {
	DataSource string     `json:"data_source"`
	Query      string     `json:"query"`
	TopK       *int64     `json:"top_k,omitempty"`
	Documents  []Document `json:"documents"`
	SpanID     string     `json:"span_id,omitempty"`
}

// Document is one retrieved document.
type Document struct {
	ID      string   `json:"id"`
	Score   *float64 `json:"score,omitempty"`
	Content string   `json:"content,omitempty"`
}

// Usage counts tokens. InputTokens includes cached input tokens (the OTel rule).
type Usage struct {
	InputTokens           int64 `json:"input_tokens"`
	OutputTokens          int64 `json:"output_tokens"`
	CacheReadInputTokens  int64 `json:"cache_read_input_tokens"`
	CacheWriteInputTokens int64 `json:"cache_write_input_tokens"`
	ReasoningOutputTokens int64 `json:"reasoning_output_tokens"`
	TotalTokens           int64 `json:"total_tokens"`
}

// Add sums u and o field by field.
func (u *Usage) Add(o Usage) {
	u.InputTokens += o.InputTokens
	u.OutputTokens += o.OutputTokens
	u.CacheReadInputTokens += o.CacheReadInputTokens
	u.CacheWriteInputTokens += o.CacheWriteInputTokens
	u.ReasoningOutputTokens += o.ReasoningOutputTokens
	u.TotalTokens += o.TotalTokens
}

// Step is one LLM call, tool execution, retrieval, embedding or nested agent, in start order.
type Step struct {
	Index        int        `json:"index"`
	Kind         StepKind   `json:"kind"`
	Operation    string     `json:"operation"`
	Name         string     `json:"name"`
	SpanID       string     `json:"span_id"`
	ParentSpanID string     `json:"parent_span_id"`
	ServiceName  string     `json:"service_name"`
	StartTime    time.Time  `json:"start_time"`
	EndTime      time.Time  `json:"end_time"`
	Status       StepStatus `json:"status"`
	Error        string     `json:"error,omitempty"`
	Conventions  []string   `json:"conventions"`

	ModelConfig        ModelConfig      `json:"model_config"`
	SystemInstructions []Part           `json:"system_instructions,omitempty"`
	InputMessages      []Message        `json:"input_messages,omitempty"`
	OutputMessages     []Message        `json:"output_messages,omitempty"`
	ToolDefinitions    []ToolDefinition `json:"tool_definitions,omitempty"`
	ResponseID         string           `json:"response_id,omitempty"`
	FinishReasons      []string         `json:"finish_reasons,omitempty"`
	Usage              Usage            `json:"usage"`

	ToolCall  *ToolCall  `json:"tool_call,omitempty"`
	Retrieval *Retrieval `json:"retrieval,omitempty"`
	AgentName string     `json:"agent_name,omitempty"`
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
