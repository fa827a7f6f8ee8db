package scrub

import (
	"strconv"
	"testing"
)

// BenchmarkNamesAfterIDsFilledTheCache scrubs names first seen after the process has scrubbed
// 60,000 unique ids (a few thousand runs of response and tool call ids), as a collector does
// when a new agent, model or tool appears after it has run for a while: remembered once, or
// scanned every time if the cache stopped taking strings when full.
// Run: go test -run '^$' -bench NamesAfterIDs -benchmem -count 6 ./scrub/
func BenchmarkNamesAfterIDsFilledTheCache(b *testing.B) {
	s, err := New(testConfig(b))
	if err != nil {
		b.Fatal(err)
	}
	for i := range 60000 {
		s.plain("chatcmpl-"+strconv.Itoa(1e9+i*7919), &Report{})
	}
	names := make([]string, 100)
	for i := range names {
		names[i] = "search_flights_v" + strconv.Itoa(i)
		s.plain(names[i], &Report{})
	}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		s.plain(names[i%len(names)], &Report{})
	}
}
