package pdatawalk

import "go.opentelemetry.io/collector/pdata/ptrace"

// OTLP span flags bits 8 and 9 (SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK, _IS_REMOTE_MASK): the SDK
// knew whether the span's parent is in another process, and it is.
const (
	SpanFlagsHasIsRemote = 0x100
	SpanFlagsIsRemote    = 0x200
)

// ParentIsRemote tells whether the SDK recorded that sp's parent is in another process, as for
// an agent served behind a traced caller (its server span's parent is the caller's span,
// exported by another service). Older SDKs do not set bit 8: then it is false.
func ParentIsRemote(sp ptrace.Span) bool {
	f := sp.Flags()
	return f&SpanFlagsHasIsRemote != 0 && f&SpanFlagsIsRemote != 0
}
