package scrub

import (
	"crypto/rand"
	"encoding/base64"
	"strings"
	"testing"
)

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
	prompt := strings.Repeat("You are a weather assistant. Use get_weather(city, unit) for live conditions. What is the weather in Paris today? ", 20)
	result := `{"city":"Paris","temperature":14,"unit":"celsius","sky":"overcast","forecast":[` + strings.Repeat(`{"day":"mon","high":16,"low":9},`, 30) + `{"day":"tue","high":15,"low":8}]}`
	raw := make([]byte, 3<<20)
	_, _ = rand.Read(raw)
	for _, tc := range []struct{ name, text string }{
		{"prompt", prompt},
		{"json_tool_result", result},
		{"random_base64_4MiB", base64.StdEncoding.EncodeToString(raw)},
	} {
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
