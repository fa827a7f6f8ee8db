package scrub

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Text shaped like a placeholder but with a kind no scrubber writes is scanned like any text:
// it cannot carry a card number, a phone number or a password past the scrubber.
func TestPlaceholderShapeHidesNothing(t *testing.T) {
	cfg := Config{Enabled: true, Key: "k", Rules: []RuleConfig{{Kind: "employee_id", Pattern: `\bEMP-\d{6}\b`}}}
	s := newScrubber(t, cfg)
	for _, tc := range []struct{ in, secret string }{
		{"card <secret:4111111111111111:0123456789ab> thanks", "4111111111111111"},
		{"call <secret:14155550132:0123456789ab>", "14155550132"},
		{`{"password":"<secret:hunter2:0123456789ab>"}`, "hunter2"},
	} {
		out := s.Text(tc.in, &Report{})
		assert.NotContains(t, out, tc.secret, tc.in)
		assert.Equal(t, out, s.Text(out, &Report{}), "idempotent")
	}
	// The placeholders it writes, of built-in kinds (also turned off) and of its rules, stay.
	for _, p := range []string{"<secret:payment_card:0123456789ab>", "<secret:employee_id:0123456789ab>", "<secret:aws_access_token:0123456789ab>"} {
		var r Report
		assert.Equal(t, "x "+p+" y", s.Text("x "+p+" y", &r))
		assert.Equal(t, `{"password":"`+p+`"}`, s.Text(`{"password":"`+p+`"}`, &r))
		assert.Empty(t, r.Counts)
	}
}

// A placeholder-shaped text of a kind no scrubber of the policy writes is not counted. (With
// secret_field on, its "secret:" reads as a name and what follows is masked.)
func TestForgedKindsAreNotCounted(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k", Detectors: map[string]string{KindSecretField: ActionOff}})
	td := ptrace.NewTraces()
	sp := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	sp.Attributes().PutStr("note", "mail alice@example.com <secret:made_up:0123456789ab> <secret:made_up:0123456789ac>")
	var scrubbed, counted Report
	s.Traces(td, &scrubbed)
	s.CountTraces(td, &counted)
	assert.Equal(t, map[string]int64{"email": 1}, scrubbed.Counts)
	assert.Equal(t, scrubbed.Counts, counted.Counts)
}

// A placeholder is not read as a URL's user (its ':' is no separator before a password) nor as
// the start of its password. An address masked in a URL's user part
// (scheme://alice@example.com!@host) left scheme://<secret:email:…>!@host, and the second pass
// masked "email:…>!" as a password; a password masked with an address after it
// (A://0:1@0.AA0@, FuzzText) left A://0:<secret:…>0@, and the second pass masked it again.
func TestPlaceholdersAreNoURLUserOrPassword(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	for _, in := range []string{"wget ftp://alice@example.com!@ftp.example.org/pub/f.tgz", "A://0@0.AA0@", "A://0:1@0.AA0@"} {
		out := s.Text(in, &Report{})
		assert.NotContains(t, out, "alice@example.com", in)
		assert.Equal(t, out, s.Text(out, &Report{}), "idempotent: %q", in)
	}
	out := s.Text("postgres://app:hunter2-secret@db.internal:5432/app", &Report{})
	assert.NotContains(t, out, "hunter2-secret", "a URL's password is still found")
}
