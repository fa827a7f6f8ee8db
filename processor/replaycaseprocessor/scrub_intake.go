package replaycaseprocessor

import "github.com/reprise-dev/reprise/scrub"

// Each request is scrubbed where it arrives, before it is stored ahead or held: no secret it
// carries reaches the write-ahead storage's disk, nor the memory of an open case. The case's
// scrub counts are read from the placeholders when the case is built (scrub.CountTraces), so
// they count what the case's own telemetry had masked, after de-duplication, a split at the
// span limit or a restart. Records that an earlier version stored unscrubbed are scrubbed as
// they are restored (scrubbing scrubbed telemetry changes nothing).

// scrubTraceChunks scrubs the chunks of one request in place.
func (p *caseProcessor) scrubTraceChunks(chunks []*traceChunk) {
	for _, c := range chunks {
		p.scrubber.Traces(c.td, &scrub.Report{})
	}
}

// scrubLogChunks scrubs the GenAI log events of one request in place.
func (p *caseProcessor) scrubLogChunks(chunks []*logChunk) {
	for _, c := range chunks {
		p.scrubber.Logs(c.ld, &scrub.Report{})
	}
}
