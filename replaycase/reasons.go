package replaycase

import "slices"

// Reason codes. They are stable identifiers: dashboards and re-drive filters match on them.
const (
	// Evidence (configurable through the processor's evidence policy).
	ReasonNoRootSpan            = "no_root_span"             // no span without a parent arrived
	ReasonNoLLMSteps            = "no_llm_steps"             // no model call was found in the trace
	ReasonNoInputMessages       = "no_input_messages"        // a model call has no recorded input content
	ReasonNoModelOutput         = "no_model_output"          // a model call has no recorded output content
	ReasonNoModelName           = "no_model_name"            // a model call names no model
	ReasonToolCallWithoutResult = "tool_call_without_result" // a requested tool call has no result or error
	ReasonUnparseableContent    = "unparseable_content"      // a content attribute or event is not valid JSON / not the expected shape
	ReasonTruncatedContent      = "truncated_content"        // content was cut by the emitter or an attribute limit
	ReasonContentRef            = "content_ref_only"         // content was uploaded elsewhere (*_ref attributes)
	ReasonSecretDetected        = "secret_detected"          // the scrub policy found a kind whose action is quarantine
	ReasonEmbeddingsNotRecorded = "embeddings_not_recorded"  // an embedding call lacks its input text or returned vector, so it cannot be replayed
	// ReasonConflictingConventions: two conventions on one span recorded different messages,
	// models or token counts; the step holds the first one's (the precedence order), one of two.
	ReasonConflictingConventions = "conflicting_conventions"

	// Lifecycle (always applied).
	ReasonEvicted   = "evicted"    // closed early because a memory limit was hit
	ReasonSpanLimit = "span_limit" // the trace reached max_spans_per_trace
	ReasonShutdown  = "shutdown"   // flushed at shutdown before its root span arrived
	ReasonMaxAge    = "max_age"    // still open after max_age
	ReasonLateSpans = "late_spans" // spans of a trace whose case was already closed
	// ReasonTraceSplit marks a case built from data consumed from Kafka that holds only part of
	// its trace (a partition moved between collectors, or data arrived after the case closed):
	// the other parts are rows with the same trace id.
	ReasonTraceSplit = "trace_split"
)

// Recorded values that cannot be right. The value is left out of the case (a token count stays
// 0, a parameter stays unrecorded) and the reason says which attribute held what.
const (
	ReasonInvalidUsage     = "invalid_usage"     // a token count is not a non-negative integer ("abc", 1e300, 12.5, -3)
	ReasonInvalidParameter = "invalid_parameter" // a request parameter is not a number or out of range (max_tokens -5, temperature NaN or 7, top_p 1.5, top_k -1)
	ReasonInvalidTimestamp = "invalid_timestamp" // a span timestamp past what int64 nanoseconds hold (it would wrap to before 1970)
	ReasonEndBeforeStart   = "end_before_start"  // a span, the case's root span included, ends before it starts
)

// Input reasons (always applied): the processor repaired or could not use what it received.
const (
	ReasonInvalidUTF8    = "invalid_utf8"     // strings that were not valid UTF-8 were repaired with U+FFFD
	ReasonInvalidTraceID = "invalid_trace_id" // the spans had an all-zero (empty) trace id; one case per request
	ReasonInvalidSpanID  = "invalid_span_id"  // a span had an all-zero (empty) span id; its step got a substitute
	ReasonEventLimit     = "event_limit"      // GenAI log events past max_events_per_trace were dropped
	ReasonSpanIDReused   = "span_id_reused"   // a span reused the span id of a different span of its trace and was dropped
)

// ReasonOverBudget quarantines a case whose cost exceeds the processor's
// pricing.budget.max_usd when pricing.budget.action is "quarantine".
const ReasonOverBudget = "over_budget"

// ReasonUndecodableCase is written by the replay_parquet exporter on the quarantine row of case
// spans it could not decode (their spans are kept for a re-drive).
const ReasonUndecodableCase = "undecodable_case"

// reasonCodes is every code a dataset row can carry, in the order declared above. A code added
// above must be added here: the replay_parquet receiver's select.reason_codes refuses the others
// (a misspelt code would select nothing), and a test compares this list with the declarations.
var reasonCodes = []string{
	ReasonNoRootSpan, ReasonNoLLMSteps, ReasonNoInputMessages, ReasonNoModelOutput, ReasonNoModelName,
	ReasonToolCallWithoutResult, ReasonUnparseableContent, ReasonTruncatedContent, ReasonContentRef,
	ReasonSecretDetected, ReasonEmbeddingsNotRecorded, ReasonConflictingConventions,
	ReasonEvicted, ReasonSpanLimit, ReasonShutdown, ReasonMaxAge, ReasonLateSpans, ReasonTraceSplit,
	ReasonInvalidUsage, ReasonInvalidParameter, ReasonInvalidTimestamp, ReasonEndBeforeStart,
	ReasonInvalidUTF8, ReasonInvalidTraceID, ReasonInvalidSpanID, ReasonEventLimit, ReasonSpanIDReused,
	ReasonOverBudget,
	ReasonUndecodableCase,
}

// ReasonCodes returns every reason code a dataset row can carry.
func ReasonCodes() []string { return slices.Clone(reasonCodes) }

// IsReasonCode tells whether code is one of ReasonCodes.
func IsReasonCode(code string) bool { return slices.Contains(reasonCodes, code) }
