package normalize

import (
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/reprise-dev/reprise/internal/pdatawalk"
)

// An agent served behind a traced caller (a web handler that received a W3C traceparent from a
// gateway or frontend whose spans are exported elsewhere) sends a trace whose top span has a
// parent in another process: no span of the trace is parentless. OTLP span flags say that the
// SDK knew the parent to be remote (pdatawalk.ParentIsRemote). Such a span is the run's root in this process (a "local root"); without it every run
// of an agent served over HTTP was quarantined no_root_span. Without the flags (older SDKs do
// not set bit 8) a missing parent may be a lost local span, so nothing is assumed.

// localRoots keeps the candidates (spans whose parent is remote) whose parent is not among the
// trace's spans: those are the roots of the run in this process.
func localRoots(candidates []pdatawalk.Span, spanIDs map[pcommon.SpanID]bool) []pdatawalk.Span {
	var out []pdatawalk.Span
	for _, s := range candidates {
		if !spanIDs[s.Span.ParentSpanID()] {
			out = append(out, s)
		}
	}
	return out
}
