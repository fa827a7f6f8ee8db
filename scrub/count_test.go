package scrub

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/scrub/scrubtest"
)

// scrubbedAndCounted scrubs a span and a log record holding in (as a prompt, a secret-named
// attribute, a JSON body and an attribute key) and returns the scrub's report and the count's
// of the scrubbed copy.
func scrubbedAndCounted(s *Scrubber, in string) (scrubbed, counted Report) {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("deployment.note", in)
	sp := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	sp.SetName(in)
	sp.Attributes().PutStr("gen_ai.prompt", "see "+in)
	sp.Attributes().PutStr("api_key", in)
	sp.Attributes().PutEmptySlice("tags").AppendEmpty().SetStr(in)
	sp.Events().AppendEmpty().Attributes().PutStr(in, "v")
	ld := plog.NewLogs()
	lr := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	lr.Body().SetEmptyMap().PutStr("content", `{"text":"`+strings.ReplaceAll(in, `"`, `'`)+`"}`)
	lr.Attributes().PutEmptyBytes("raw").FromRaw([]byte(in))
	s.Traces(td, &scrubbed)
	s.Logs(ld, &scrubbed)
	s.CountTraces(td, &counted)
	s.CountLogs(ld, &counted)
	return scrubbed, counted
}

// Counting the placeholders of scrubbed telemetry gives what scrubbing it reported: every
// planted kind, wherever it is, with the quarantine action where the policy gives it.
func TestCountingScrubbedTelemetryGivesTheScrubsReport(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "count", Detectors: map[string]string{"email": ActionQuarantine}})
	for _, p := range scrubtest.Planted {
		scrubbed, counted := scrubbedAndCounted(s, p.Text)
		require.NotEmpty(t, scrubbed.Counts, p.Kind)
		assert.Equal(t, scrubbed.Counts, counted.Counts, p.Kind)
		assert.ElementsMatch(t, scrubbed.Quarantine, counted.Quarantine, p.Kind)
	}
	_, counted := scrubbedAndCounted(s, "jane.doe@example-corp.com")
	assert.Equal(t, []string{"email"}, counted.Quarantine)

	var none Report
	s.CountTraces(ptrace.NewTraces(), &none)
	assert.Empty(t, none.Counts, "nothing masked, nothing counted")
}

// FuzzCountMatchesScrub: for any text without a placeholder, counting the scrubbed telemetry
// gives the scrub's own counts.
// Run: go test -run '^$' -fuzz FuzzCountMatchesScrub -fuzztime 30s ./scrub/
func FuzzCountMatchesScrub(f *testing.F) {
	for _, p := range scrubtest.Planted {
		f.Add(p.Text + " and " + p.Text)
	}
	f.Add(`{"password":"x","n":4111111111111111,"a@b.co":[1,2]}`)
	s := newScrubber(f, Config{Enabled: true, Key: "fuzz"})
	f.Fuzz(func(t *testing.T, in string) {
		if strings.Contains(in, placeholderOpen) {
			return // a placeholder received is counted, not found: the two differ by design
		}
		scrubbed, counted := scrubbedAndCounted(s, in)
		if len(scrubbed.Counts) != len(counted.Counts) {
			t.Fatalf("%q: scrubbed %v, counted %v", in, scrubbed.Counts, counted.Counts)
		}
		for k, n := range scrubbed.Counts {
			if counted.Counts[k] != n {
				t.Fatalf("%q: scrubbed %v, counted %v", in, scrubbed.Counts, counted.Counts)
			}
		}
	})
}
