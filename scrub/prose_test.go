package scrub

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/reprise-dev/reprise/scrub/scrubtest"
)

// A secret in prose is followed by punctuation that gitleaks' rules, written for code, do not
// take as its end.
func TestSecretsBeforeProsePunctuation(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	for _, p := range scrubtest.Planted {
		if p.Kind == "pem_private_key" {
			continue // it takes in what follows
		}
		for _, around := range [][2]string{{"", ","}, {"", "."}, {"(", ")"}, {"(", ")."}, {"[", "]"}, {"{", "}"},
			{"<", ">"}, {"", "!"}, {"", "?"}, {"", ":"}, {"“", "”"}, {"« ", " »"}, {"«", "»"}, {"**", "**"}, {"|", "|"}, {"", "..."}} {
			in := "the key is " + around[0] + p.Text + around[1] + " thanks"
			out := s.Text(in, &Report{})
			assert.NotContains(t, out, p.Must(), in)
			assert.Equal(t, out, s.Text(out, &Report{}), "idempotent")
		}
	}
}

func TestProseViewBlanksOnlyWhatEndsASecretLikeToken(t *testing.T) {
	for in, want := range map[string]string{
		"key AIzaSyD3x9Kq7LmP2wR8tY4uB6nC1vF5gH0jQ2Z, then": "key AIzaSyD3x9Kq7LmP2wR8tY4uB6nC1vF5gH0jQ2Z  then",
		"(eyJhbGciOi.eyJzdWIiOi.c2lnbmF0dX).":               "(eyJhbGciOi.eyJzdWIiOi.c2lnbmF0dX  ",
		"“sk_live_51HxYzAbCdEfGhIjKlMnOpQr”":                "   sk_live_51HxYzAbCdEfGhIjKlMnOpQr   ",
	} {
		got, ok := proseView(in)
		assert.True(t, ok, in)
		assert.Equal(t, want, got)
		assert.Len(t, got, len(in), "the same offsets")
	}
	for _, in := range []string{"Use the information, the conditions.", "v1.2.3, ok", "AIzaSyD3x9Kq7LmP2wR8tY4uB6nC1vF5gH0jQ2Z.html"} {
		_, ok := proseView(in)
		assert.False(t, ok, in)
	}
}
