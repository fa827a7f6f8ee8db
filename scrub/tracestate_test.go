package scrub

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// A span's and a link's trace state are stored with the span; a vendor's value in it is free
// text (an e-mail address as a user id).
func TestTraceStatesAreScrubbed(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	td := ptrace.NewTraces()
	sp := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	sp.TraceState().FromRaw("rojo=00f067aa0ba902b7,usr=alice@example.com")
	sp.Links().AppendEmpty().TraceState().FromRaw("usr=bob@example.com")
	var r Report
	s.Traces(td, &r)
	assert.Regexp(t, `^rojo=00f067aa0ba902b7,usr=<secret:email:[0-9a-f]{12}>$`, sp.TraceState().AsRaw())
	assert.NotContains(t, sp.Links().At(0).TraceState().AsRaw(), "bob@")
	assert.Equal(t, map[string]int64{"email": 2}, r.Counts)
	var counted Report
	s.CountTraces(td, &counted)
	assert.Equal(t, r.Counts, counted.Counts)
}
