package scrub

import (
	"reflect"
	"strings"
	"testing"

	"github.com/reprise-dev/reprise/internal/jsonany"
	"github.com/reprise-dev/reprise/internal/testfixtures"
)

// sameWholeJSON asserts that wholeJSON decides and decodes as encoding/json alone does.
func sameWholeJSON(t *testing.T, v string) {
	t.Helper()
	text := strings.TrimSpace(v) // as Scrubber.text passes it
	got, gotOK := wholeJSON(text)
	want, wantOK := wholeJSONStd(text)
	if gotOK != wantOK || !reflect.DeepEqual(got, want) {
		t.Fatalf("wholeJSON(%q) = %#v, %v; encoding/json gives %#v, %v", text, got, gotOK, want, wantOK)
	}
}

func TestWholeJSONMatchesStd(t *testing.T) {
	texts := append(testfixtures.JSONTexts(t),
		`[]} sk-proj-abc`, `{"a":1}{"b":2}`, `{"k":"\ud800x"}`, "{\"k\":\"\xff\"}", `[1,2`, `{"a":1,"a":2}`)
	for _, v := range texts {
		sameWholeJSON(t, v)
	}
}

// The scrubber still finds a secret inside JSON that only encoding/json decodes (an unpaired
// surrogate escape, which jsonany leaves to it).
func TestTextJSONFallbackScrubs(t *testing.T) {
	in := `{"note":"\ud800","password":"hunter2-very-secret"}`
	if _, ok := jsonany.Decode(in); ok {
		t.Fatal("jsonany decodes the input: the test no longer covers the fallback")
	}
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	var r Report
	out := s.Text(in, &r)
	if want := "{\"note\":\"\uFFFD\",\"password\":\"<secret:secret_field:"; !strings.HasPrefix(out, want) || r.Counts["secret_field"] != 1 {
		t.Fatalf("got %q (report %v), want the note as U+FFFD and the password masked", out, r.Counts)
	}
}

// FuzzWholeJSON checks wholeJSON against encoding/json alone on random and mutated input,
// seeded with the fixtures' JSON attributes.
// Run: go test -run '^$' -fuzz FuzzWholeJSON -fuzztime 60s ./scrub/
func FuzzWholeJSON(f *testing.F) {
	for _, v := range testfixtures.JSONTexts(f) {
		f.Add(v)
	}
	f.Add(`[]} sk-proj-abc`)
	f.Fuzz(sameWholeJSON)
}

// BenchmarkWholeJSON parses the fixtures' JSON attributes as the scrubber does, with wholeJSON
// and with encoding/json alone.
// Run: go test -run '^$' -bench WholeJSON -benchmem -count 3 ./scrub/
func BenchmarkWholeJSON(b *testing.B) {
	var texts []string
	for _, v := range testfixtures.JSONTexts(b) {
		texts = append(texts, strings.TrimSpace(v))
	}
	testfixtures.BenchmarkJSONParsers(b, texts,
		testfixtures.JSONParser{Name: "jsonany", Parse: func(t string) bool { _, ok := wholeJSON(t); return ok }},
		testfixtures.JSONParser{Name: "encoding_json", Parse: func(t string) bool { _, ok := wholeJSONStd(t); return ok }})
}
