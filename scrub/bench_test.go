package scrub

import (
	"crypto/rand"
	"encoding/base64"
	"strings"
	"testing"
)

// benchTexts are ordinary agent content (prompts and a JSON tool result) and one large random
// base64 value (an image in a message).
func benchTexts() []struct{ name, text string } {
	raw := make([]byte, 3<<20)
	_, _ = rand.Read(raw)
	return []struct{ name, text string }{
		{"prompt", strings.Repeat("You are a weather assistant. Use get_weather(city, unit) for live conditions. What is the weather in Paris today? ", 20)},
		// Prose with keywords of gitleaks' token rules (the "ey" of JWTs in "key", "they",
		// "survey"; "api-"): those rules run on it, plain and widened (boundaries.go).
		{"prompt_with_keywords", strings.Repeat("They said the survey API key is rotated monthly; see https://docs.example.com/api-keys/rotate?ref=survey#money for the policy. ", 20)},
		{"json_tool_result", `{"city":"Paris","temperature":14,"unit":"celsius","sky":"overcast","forecast":[` + strings.Repeat(`{"day":"mon","high":16,"low":9},`, 30) + `{"day":"tue","high":15,"low":8}]}`},
		{"random_base64_4MiB", base64.StdEncoding.EncodeToString(raw)},
	}
}

// BenchmarkText measures the scrubber on ordinary agent content (a prompt and a JSON tool
// result, nothing to find) and on one large random base64 value (an image in a message: binary
// once decoded, so the text rules skip it), each scanned as if seen for the first time; and on a
// prompt seen before.
// Run: go test -run '^$' -bench Text -benchmem -count 6 ./scrub/
func BenchmarkText(b *testing.B) {
	s, err := New(testConfig(b))
	if err != nil {
		b.Fatal(err)
	}
	texts := benchTexts()
	prompt := texts[0].text
	for _, tc := range texts {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(tc.text)))
			for i := 0; i < b.N; i++ {
				var r Report
				s.text(tc.text, &r) // the scan itself, without the cache of clean long strings
			}
		})
	}
	// The same prompt again, as Text sees a system prompt repeated from run to run: hashed and
	// found in the cache of clean long strings.
	b.Run("prompt_seen_before", func(b *testing.B) {
		b.SetBytes(int64(len(prompt)))
		s.Text(prompt, &Report{})
		for i := 0; i < b.N; i++ {
			var r Report
			s.Text(prompt, &r)
		}
	})
}
