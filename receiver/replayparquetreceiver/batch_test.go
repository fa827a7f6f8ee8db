package replayparquetreceiver

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/replaycase"
)

func rawCase(t *testing.T, resource map[string]string) *replaycase.Case {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	for k, v := range resource {
		rs.Resource().Attributes().PutStr(k, v)
	}
	rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty().SetName("root")
	raw, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	require.NoError(t, err)
	return &replaycase.Case{CaseID: "c1", RawSpans: raw}
}

func resourceAttr(b *batch, key string) string {
	v, _ := b.traces.ResourceSpans().At(0).Resource().Attributes().Get(key)
	return v.AsString()
}

// The first ingestion time survives any number of re-drives, with or without the processor
// copying it into the metadata; redriven_from always names the row just read.
func TestProvenanceOfARepeatedRedrive(t *testing.T) {
	src := source{rel: "quarantine/dt=2026-11-30/part-b.zstd.parquet", ingestedAt: "2026-11-30T10:00:00Z"}

	b := newBatch()
	b.add(rawCase(t, nil), EmitRaw, src, 3)
	assert.Equal(t, "quarantine/dt=2026-11-30/part-b.zstd.parquet#3", resourceAttr(b, AttrRedrivenFrom))
	assert.Equal(t, "2026-11-30T10:00:00Z", resourceAttr(b, AttrOriginalIngestedAt))

	b = newBatch()
	b.add(rawCase(t, map[string]string{AttrRedrivenFrom: "old#1", AttrOriginalIngestedAt: "2026-11-01T00:00:00Z"}), EmitRaw, src, 0)
	assert.Equal(t, "2026-11-01T00:00:00Z", resourceAttr(b, AttrOriginalIngestedAt))
	assert.Equal(t, "quarantine/dt=2026-11-30/part-b.zstd.parquet#0", resourceAttr(b, AttrRedrivenFrom))

	c := rawCase(t, nil)
	c.Metadata = map[string]string{MetaOriginalIngestedAt: "2026-10-01T00:00:00Z"}
	b = newBatch()
	b.add(c, EmitRaw, src, 0)
	assert.Equal(t, "2026-10-01T00:00:00Z", resourceAttr(b, AttrOriginalIngestedAt))

	b = newBatch()
	b.add(&replaycase.Case{CaseID: "c2", RawSpans: []byte{0xff, 0xff}}, EmitRaw, src, 0)
	b.add(&replaycase.Case{CaseID: "c2"}, EmitRaw, src, 1)
	require.Len(t, b.dropped, 2, "two rows of one case are two drops")
	assert.Equal(t, drop{"c2", "undecodable_raw", b.dropped[0].detail}, b.dropped[0])
	assert.Contains(t, b.dropped[0].detail, "raw_spans: ")
	assert.Equal(t, drop{"c2", "no_raw_spans", ""}, b.dropped[1])
	assert.Empty(t, b.caseIDs)
}
