package replaycase

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

	// Lifecycle (always applied).
	ReasonEvicted   = "evicted"    // closed early because a memory limit was hit
	ReasonSpanLimit = "span_limit" // the trace reached max_spans_per_trace
	ReasonShutdown  = "shutdown"   // flushed at shutdown before its root span arrived
	ReasonMaxAge    = "max_age"    // still open after max_age
	ReasonLateSpans = "late_spans" // spans of a trace whose case was already closed
)

// Input reasons (always applied): the processor repaired or could not use what it received.
const (
	ReasonInvalidUTF8    = "invalid_utf8"     // strings that were not valid UTF-8 were repaired with U+FFFD
	ReasonInvalidTraceID = "invalid_trace_id" // the spans had an all-zero (empty) trace id; one case per request
	ReasonEventLimit     = "event_limit"      // GenAI log events past max_events_per_trace were dropped
)
