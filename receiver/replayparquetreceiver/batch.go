package replayparquetreceiver

import (
	"strconv"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/replaycase"
)

// batch is the data of up to batch_size selected cases, pushed together.
type batch struct {
	traces  ptrace.Traces
	logs    plog.Logs
	caseIDs []string // cases whose data is in traces (and logs)
	// spans[i] is the range of traces' resource spans that hold caseIDs[i], so that a case can
	// be pushed on its own (push isolates the case a consumer refuses permanently).
	spans   [][2]int
	dropped []drop // rows that cannot be emitted; a case id may repeat across rows
}

// drop is one selected row that is not emitted: reason is the metric attribute, detail the
// error logged with it.
type drop struct{ caseID, reason, detail string }

func newBatch() *batch {
	return &batch{traces: ptrace.NewTraces(), logs: plog.NewLogs()}
}

func (b *batch) size() int { return len(b.caseIDs) + len(b.dropped) }

func (b *batch) drop(caseID, reason, detail string) {
	b.dropped = append(b.dropped, drop{caseID, reason, detail})
}

// add appends the case's data in the configured form, or records why it cannot be emitted.
func (b *batch) add(c *replaycase.Case, emit string, src source, row int64) {
	from := src.rel + "#" + strconv.FormatInt(row, 10)
	ingested := c.Metadata[MetaOriginalIngestedAt]
	if ingested == "" {
		ingested = src.ingestedAt
	}
	if emit == EmitCases {
		if c.Metadata == nil {
			c.Metadata = map[string]string{}
		}
		c.Metadata[MetaRedrivenFrom] = from
		c.Metadata[MetaOriginalIngestedAt] = ingested
		td := ptrace.NewTraces()
		if err := replaycase.Encode(c, td); err != nil {
			b.drop(c.CaseID, "encode_error", err.Error())
			return
		}
		b.addSpans(c.CaseID, td)
		return
	}
	if len(c.RawSpans) == 0 {
		b.drop(c.CaseID, "no_raw_spans", "")
		return
	}
	td, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(c.RawSpans)
	if err != nil {
		b.drop(c.CaseID, "undecodable_raw", "raw_spans: "+err.Error())
		return
	}
	ld := plog.NewLogs()
	if len(c.RawEvents) > 0 {
		if ld, err = (&plog.ProtoUnmarshaler{}).UnmarshalLogs(c.RawEvents); err != nil {
			b.drop(c.CaseID, "undecodable_raw", "raw_events: "+err.Error())
			return
		}
	}
	// Raw spans re-driven before already carry the first ingestion time on their resources
	// (even when the processor did not copy it into the metadata): it wins over this file's.
	keep := c.Metadata[MetaOriginalIngestedAt] == ""
	for i := 0; i < td.ResourceSpans().Len(); i++ {
		putProvenance(td.ResourceSpans().At(i).Resource().Attributes(), from, ingested, keep)
	}
	for i := 0; i < ld.ResourceLogs().Len(); i++ {
		putProvenance(ld.ResourceLogs().At(i).Resource().Attributes(), from, ingested, keep)
	}
	ld.ResourceLogs().MoveAndAppendTo(b.logs.ResourceLogs())
	b.addSpans(c.CaseID, td)
}

// addSpans moves a case's spans into the batch, remembering where they are.
func (b *batch) addSpans(caseID string, td ptrace.Traces) {
	from := b.traces.ResourceSpans().Len()
	td.ResourceSpans().MoveAndAppendTo(b.traces.ResourceSpans())
	b.caseIDs = append(b.caseIDs, caseID)
	b.spans = append(b.spans, [2]int{from, b.traces.ResourceSpans().Len()})
}

// caseTraces is a copy of the spans of caseIDs[i] alone.
func (b *batch) caseTraces(i int) ptrace.Traces {
	td := ptrace.NewTraces()
	for j := b.spans[i][0]; j < b.spans[i][1]; j++ {
		b.traces.ResourceSpans().At(j).CopyTo(td.ResourceSpans().AppendEmpty())
	}
	return td
}

// putProvenance sets the re-drive attributes of one resource; keepIngested leaves an
// original ingestion time the resource already has.
func putProvenance(a pcommon.Map, from, ingested string, keepIngested bool) {
	a.PutStr(AttrRedrivenFrom, from)
	if _, has := a.Get(AttrOriginalIngestedAt); ingested != "" && !(has && keepIngested) {
		a.PutStr(AttrOriginalIngestedAt, ingested)
	}
}
