package scrub

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Header values in text hold their secret past the first word of a `name: value` pair.
func TestHeaderValuesInTextAreMaskedWhole(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	for _, tc := range []struct{ in, secret, kind string }{
		{`curl -H "Cookie: _ga=GA1.2.3; sessionid=abc123xyz987" https://x`, "abc123xyz987", KindSecretField},
		{"GET / HTTP/1.1\r\nCookie: theme=dark;  sid=s3ss10n-v4lue\r\nAccept: */*", "s3ss10n-v4lue", KindSecretField},
		{`Authorization: Token 9944b09199c62bcf9418ad846dd0e4bb`, "9944b09199c62bcf9418ad846dd0e4bb", KindSecretField},
		{`headers={'Authorization': Token abc123def}`, "abc123def", KindSecretField},
		{`Authorization: Bearer short123`, "short123", "bearer_token"},
		{`Authorization: Basic YWxp`, "YWxp", "basic_auth"},
	} {
		var r Report
		out := s.Text(tc.in, &r)
		assert.NotContains(t, out, tc.secret, tc.in)
		assert.Equal(t, map[string]int64{tc.kind: 1}, r.Counts, tc.in)
		assert.Equal(t, out, s.Text(out, &Report{}), "idempotent")
	}
	// A token long enough for the bearer_token rule keeps the placeholder that rule gives it.
	long := "Bearer abcdefghijklmnop0123"
	assert.Equal(t, "Authorization: "+s.Text(long, &Report{}), s.Text("Authorization: "+long, &Report{}))
}

// In JSON quoted in text, the value ends before the backslash that escapes its closing quote.
func TestHeaderValueInEscapedJSONKeepsTheEscape(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	out := s.Text(`said {\"h\": \"Authorization: Token abc123def\", \"c\": \"Cookie: a=1; sid=xyz789\"} ok`, &Report{})
	assert.Regexp(t, `^said \{\\"h\\": \\"Authorization: <secret:secret_field:[0-9a-f]{12}>\\", \\"c\\": \\"Cookie: <secret:secret_field:[0-9a-f]{12}>\\"\} ok$`, out)
}
