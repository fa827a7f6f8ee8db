// Package normalize turns the GenAI telemetry of one trace, in whatever convention it was
// written, into a replay case. Each convention is one small adapter (adapter_*.go) that reads
// one span and fills the fields of its step that are still empty; adapters run in a fixed
// precedence order (the adapters table), so when a span carries several conventions the first
// one that has a field wins (a later one that recorded another value is reported,
// conflicting_conventions.go), and the step records every convention that contributed. Build
// (build.go) turns a whole trace into a case.
package normalize

import (
	"fmt"
	"math"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/replaycase"
)

// adapterVersion changes whenever a change to an adapter can change the case built from the
// same telemetry. It is recorded in every case.
const adapterVersion = "reprise-normalize/13"

// Convention names recorded in provenance.conventions and steps[].conventions.
const (
	convOTel              = "otel_genai"                // semconv attributes (>= 1.37 content, and the attributes every version shares)
	convOTelEvents        = "otel_genai_events"         // semconv 1.28–1.36 per-message events (log records or span events)
	convOTelContentEvents = "otel_genai_content_events" // semconv 1.26–1.27 gen_ai.content.prompt/completion span events
	convOpenLLMetry       = "openllmetry"               // OpenLLMetry / Traceloop legacy indexed attributes and traceloop.* spans
	convOpenInference     = "openinference"             // OpenInference llm.*, input/output.value, span kinds
	convVercelAI          = "vercel_ai"                 // Vercel AI SDK ai.* spans
)

// spanInput is one span with its context and the GenAI log events joined to it by trace and
// span id, in arrival order.
type spanInput struct {
	Resource pcommon.Resource
	Scope    pcommon.InstrumentationScope
	Span     ptrace.Span
	SpanID   string // Span's id as hex, written once
	Events   []plog.LogRecord
}

// adapter reads one convention from a span. apply reports whether the span carried it.
type adapter struct {
	name  string
	apply func(in *spanInput, b *stepBuilder) bool
}

// adapters in precedence order.
var adapters = []adapter{
	{convOTel, otelAttributes},
	{convOTelEvents, otelEvents},
	{convOTelContentEvents, otelContentEvents},
	{convOpenLLMetry, openLLMetry},
	{convOpenInference, openInference},
	{convVercelAI, vercelAI},
}

// errorUnnamed is the error of a failed step whose span names no error.
const errorUnnamed = "error"

// normalized is what the adapters found on one span.
type normalized struct {
	Step           replaycase.Step
	ConversationID string
	Findings       []replaycase.Reason     // unreadable content and wrong values on this span
	Evaluations    []replaycase.Evaluation // gen_ai.evaluation.result events recorded on this span
	evalFindings   []replaycase.Reason     // evaluations that could not be read; kept even when the span is no step
	// toolErrorsRecorded: the step's input was read from a source that marks a failed tool
	// result (a request body's is_error, Vercel's error outputs), so a result without the mark
	// was sent as a success.
	toolErrorsRecorded bool
	// callsOutputType is the output type an SDK call's span asks of the model calls under it
	// (the Vercel AI SDK's ai.schema on generateObject / streamObject): carried to its child
	// model steps that record none of their own (carryOutputType).
	callsOutputType string
}

// normalizeSpan runs every adapter over one span. ok is false when no adapter recognised GenAI
// telemetry on it (an HTTP or database span, say). b is the caller's, reused from span to span
// (a step builder is large); normalizeSpan clears it first.
func normalizeSpan(in *spanInput, b *stepBuilder) (n normalized, ok bool) {
	sp := in.Span
	*b = stepBuilder{spanID: in.SpanID}
	start, end := spanTimes(sp, b.invalid)
	b.Step = replaycase.Step{
		Name:         sp.Name(),
		SpanID:       b.spanID,
		ParentSpanID: parentID(sp),
		ServiceName:  getStr(in.Resource.Attributes(), "service.name"),
		StartTime:    start,
		EndTime:      end,
		Status:       replaycase.StepUnset,
	}
	switch sp.Status().Code() {
	case ptrace.StatusCodeOk:
		b.Step.Status = replaycase.StepOK
	case ptrace.StatusCodeError:
		b.Step.Status = replaycase.StepError
		b.Step.Error = getStr(sp.Attributes(), "error.type")
		if b.Step.Error == "" {
			b.Step.Error = sp.Status().Message()
		}
		if b.Step.Error == "" {
			b.Step.Error = errorUnnamed
		}
	}
	for _, a := range adapters {
		b.conv = a.name
		if a.apply(in, b) {
			b.Step.Conventions = append(b.Step.Conventions, a.name)
		}
	}
	if b.Step.Kind == "" {
		return b.normalized, false
	}
	droppedBySDK(in, b)
	checkRanges(b)
	b.Step.API = modelAPI(sp.Name(), sp.Attributes(), &b.Step)
	keepSentToolErrors(b)
	if b.Step.API == replaycase.APIOpenAIResponses {
		b.Step.InputMessages = responsesItems(b.Step.InputMessages)
	}
	if u := &b.Step.Usage; u.TotalTokens == 0 {
		// Counts checkRanges let through are non-negative; a sum past int64 would wrap negative.
		if u.InputTokens > math.MaxInt64-u.OutputTokens {
			b.invalid(replaycase.ReasonInvalidUsage, fmt.Sprintf("input_tokens %d + output_tokens %d overflow a token count", u.InputTokens, u.OutputTokens))
		} else {
			u.TotalTokens = u.InputTokens + u.OutputTokens
		}
	}
	if tc := b.Step.ToolCall; tc != nil && b.Step.Status == replaycase.StepError {
		tc.Error = b.Step.Error
	}
	if r := b.Step.Retrieval; r != nil && len(r.Documents) == 0 {
		r.Documents = nil // one form for "no documents recorded", the one the canonical form writes
	}
	return b.normalized, true
}

func parentID(sp ptrace.Span) string {
	if sp.ParentSpanID().IsEmpty() {
		return ""
	}
	return sp.ParentSpanID().String()
}

// kindForOperation maps gen_ai.operation.name to a step kind.
func kindForOperation(op string) replaycase.StepKind {
	switch op {
	case "chat", "text_completion", "generate_content", "completion", "generate":
		return replaycase.StepLLM
	case "embeddings", "embedding":
		return replaycase.StepEmbedding
	case "execute_tool":
		return replaycase.StepTool
	case "retrieval":
		return replaycase.StepRetrieval
	case "invoke_agent", "create_agent", "invoke_workflow":
		return replaycase.StepAgent
	}
	return ""
}
