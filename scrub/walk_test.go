package scrub

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/reprise-dev/reprise/internal/jsonany"
	"github.com/reprise-dev/reprise/internal/testfixtures"
)

// sameWholeJSON asserts that wholeJSON decides and decodes as encoding/json alone does, except
// that it takes no JSON whose objects give a name twice (the scrubber reads that as text).
func sameWholeJSON(t *testing.T, v string) {
	t.Helper()
	text := strings.TrimSpace(v) // as Scrubber.text passes it
	got, gotOK := wholeJSON(text)
	want, wantOK := wholeJSONStd(text)
	if wantOK && namesGivenTwice(text) {
		want, wantOK = nil, false
	}
	if gotOK != wantOK || !reflect.DeepEqual(got, want) {
		t.Fatalf("wholeJSON(%q) = %#v, %v; encoding/json gives %#v, %v", text, got, gotOK, want, wantOK)
	}
}

func TestWholeJSONMatchesStd(t *testing.T) {
	texts := append(testfixtures.JSONTexts(t),
		`[]} sk-proj-abc`, `{"a":1}{"b":2}`, `{"k":"\ud800x"}`, "{\"k\":\"\xff\"}", `[1,2`, `{"a":1,"a":2}`,
		`{"a":{"b":1,"\u0062":2}}`, "{\"a\":\"\xff\",\"a\":1}", `[{"a":1},{"a":1}]`)
	for _, v := range texts {
		sameWholeJSON(t, v)
	}
	// The reference itself: names repeated in one object, not across objects or arrays.
	for text, want := range map[string]bool{
		`{"a":1,"a":2}`: true, `{"a":{"b":1,"\u0062":2}}`: true, `[1,{"x":[{"y":1,"y":1}]}]`: true,
		`{"a":{"b":1},"b":2}`: false, `[{"a":1},{"a":1}]`: false, `{"a":"a","b":["a","a"]}`: false,
	} {
		if got := namesGivenTwice(text); got != want {
			t.Errorf("namesGivenTwice(%s) = %v, want %v", text, got, want)
		}
	}
}

// namesGivenTwice tells, from encoding/json's tokens, whether an object in text gives a name
// twice: the reference for wholeJSON's refusal of such JSON.
func namesGivenTwice(text string) bool {
	dec := json.NewDecoder(strings.NewReader(text))
	var names []map[string]bool // per open object or array: the object's names so far; nil for an array
	var wasName []bool          // per open object or array: whether the next string was to be a name when it opened
	name := false               // the next string token is an object's name
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		switch v := tok.(type) {
		case json.Delim:
			if v == '{' || v == '[' {
				open := map[string]bool(nil)
				if v == '{' {
					open = map[string]bool{}
				}
				names, wasName, name = append(names, open), append(wasName, name), v == '{'
				continue
			}
			names, name, wasName = names[:len(names)-1], wasName[len(wasName)-1], wasName[:len(wasName)-1]
		case string:
			if name {
				if names[len(names)-1][v] {
					return true
				}
				names[len(names)-1][v], name = true, false
				continue
			}
		}
		if len(names) == 0 {
			return false // the whole value has been read
		}
		name = names[len(names)-1] != nil // a value ended: in an object, a name comes next
	}
}

// An object that gives a name twice is read as text: the decoded value keeps only the last
// value, and the text, kept whole when the value is clean, would keep the others unscanned.
func TestJSONThatRepeatsANameIsScannedWhole(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	for _, in := range []string{
		`{"note":"sk-proj-Pl4ntedAbcdefghijklmnopqrstuv","note":"hi"}`,
		`{"email":"alice@example.com","email":"x"}`,
		`{"a":{"b":"alice@example.com","\u0062":"x"}}`,
		"{\"note\":\"alice@example.com\",\"note\":\"\xff\"}", // invalid UTF-8: the encoding/json path
	} {
		var r Report
		out := s.Text(in, &r)
		if strings.Contains(out, "alice@example.com") || strings.Contains(out, "sk-proj-Pl4nted") || len(r.Counts) == 0 {
			t.Errorf("Text(%q) = %q, %v: the first value is left", in, out, r.Counts)
		}
	}
}

// Text shaped like JSON that is JSON only once a value is masked (a raw tab or NUL in a string,
// a bad escape) is walked as JSON in the same pass: the next pass walks it, and scrubbing
// stays idempotent (FuzzText found {"pAssword:\x00":[0]}: the second pass masked [0]).
func TestTextThatMaskingMakesJSONIsWalkedAsJSON(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	for in, secret := range map[string]string{
		"{\"password\": \"hunter2\tsecret\", \"api_keys\": [[\"k3y-0ne-9f8e7d\"]]}": "k3y-0ne-9f8e7d",
		"{\"pAssword:\x00\":[\"k3y-0ne-9f8e7d\"]}":                                  "k3y-0ne-9f8e7d",
		`{"pAssword:\q x":"k3y-0ne-9f8e7d"}`:                                        "k3y-0ne-9f8e7d",
	} {
		out := s.Text(in, &Report{})
		assert.NotContains(t, out, secret, "%q", in)
		assert.Equal(t, out, s.Text(out, &Report{}), "idempotent: %q", in)
	}
}

// A key is judged as written and as scrubbed: a public name masked with the e-mail address it
// was part of leaves a secret name, which the next scrub reads, so the value is masked in the
// first pass, in JSON and in an attribute map.
func TestKeysAreJudgedAsWrittenAndAsScrubbed(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	in := `{"token_count@example.com password":"hunter2-secret"}`
	out := s.Text(in, &Report{})
	assert.NotContains(t, out, "hunter2-secret")
	assert.Equal(t, out, s.Text(out, &Report{}), "idempotent")

	m := pcommon.NewMap()
	m.PutStr("token_count@example.com password", "hunter2-secret")
	s.Map(m, &Report{})
	for k, v := range m.All() {
		assert.Equal(t, s.placeholder(KindSecretField, "hunter2-secret"), v.Str(), k)
	}
	// A secret name that is part of what is masked still names the value as written.
	out = s.Text(`{"password@example.com":"hunter2-secret"}`, &Report{})
	assert.NotContains(t, out, "hunter2-secret")
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
