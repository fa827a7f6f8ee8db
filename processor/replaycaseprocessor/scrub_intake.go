package replaycaseprocessor

import "github.com/reprise-dev/reprise/scrub"

// Each request is scrubbed where it arrives, before it is stored ahead or held: no secret it
// carries reaches the write-ahead storage's disk, nor the memory of an open case. The case's
// scrub counts are read from the placeholders when the case is built (scrub.CountTraces), so
// they count what the case's own telemetry had masked, after de-duplication, a split at the
// span limit or a restart. Records that an earlier version stored unscrubbed are scrubbed as
// they are restored (scrubbing scrubbed telemetry changes nothing).

// Counting placeholders walks every string of a run: it is done only for the runs that may
// hold some, the ones with a chunk scrubbing masked something in (chunkMeta.masked) or restored
// from storage (stored scrubbed, so what was masked before the restart no longer shows when
// they are scrubbed again). A placeholder in telemetry as received, from a case re-driven from
// its scrubbed raw spans, is therefore not counted, as the scrub found nothing in it.

// scrubTraceChunks scrubs the chunks of one request in place; restored chunks are marked as
// masked whatever the scrub finds.
func (p *caseProcessor) scrubTraceChunks(chunks []*traceChunk, restored bool) {
	for _, c := range chunks {
		var r scrub.Report
		p.scrubber.Traces(c.td, &r)
		c.masked = restored || len(r.Counts) > 0
	}
}

// scrubLogChunks is scrubTraceChunks for the GenAI log events of one request.
func (p *caseProcessor) scrubLogChunks(chunks []*logChunk, restored bool) {
	for _, c := range chunks {
		var r scrub.Report
		p.scrubber.Logs(c.ld, &r)
		c.masked = restored || len(r.Counts) > 0
	}
}
