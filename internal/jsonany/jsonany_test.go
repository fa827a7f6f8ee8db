package jsonany

import (
	"encoding/json"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/reprise-dev/reprise/internal/testfixtures"
)

// reference is what Decode promises to match: encoding/json's Decoder with UseNumber, text
// holding exactly one value with only JSON whitespace around it.
func reference(text string) (any, bool) {
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	if strings.Trim(text[dec.InputOffset():], " \t\r\n") != "" {
		return nil, false
	}
	return v, true
}

// surrogateEscape finds a \u escape of a UTF-16 surrogate, paired or not.
var surrogateEscape = regexp.MustCompile(`\\u[dD][89abcdefABCDEF]`)

// leftToEncodingJSON reports whether text is in a class the package comment leaves to
// encoding/json: invalid UTF-8, a surrogate escape (Decode may decline the unpaired ones), or
// nesting deeper than maxDepth.
func leftToEncodingJSON(text string) bool {
	return !utf8.ValidString(text) || surrogateEscape.MatchString(text) ||
		strings.Count(text, "[")+strings.Count(text, "{") > maxDepth
}

// checkSame asserts that Decode agrees with encoding/json on text: the same tree when it
// decodes, and a decline only where encoding/json fails too or the input is in a class left
// to encoding/json.
func checkSame(t *testing.T, text string) {
	t.Helper()
	want, wantOK := reference(text)
	got, gotOK := Decode(text)
	switch {
	case gotOK && !wantOK:
		t.Fatalf("Decode accepted %q, encoding/json rejects it", text)
	case gotOK && !reflect.DeepEqual(got, want):
		t.Fatalf("Decode(%q) = %#v, encoding/json gives %#v", text, got, want)
	case !gotOK && wantOK && !leftToEncodingJSON(text):
		t.Fatalf("Decode declined %q, which encoding/json decodes and no fallback class covers", text)
	}
}

func TestDecodeMatchesEncodingJSON(t *testing.T) {
	for _, text := range []string{
		`{}`, `[]`, `null`, `true`, `false`, `0`, `-0`, `1e400`, `-1.5E-7`, `12345678901234567890123`,
		`"plain"`, `" \t\r\n{} "`, ` {"a":1} `, "\t[1,2]\r\n",
		`{"a":1,"a":2}`,                        // duplicate key: the last wins
		`{"a":{"b":1},"a":{"c":2}}`,            // not merged
		`{"k":"\u00e9\n\t\"\\\/\b\f\r\u0000"}`, // escapes
		`{"emoji":"\ud83d\ude00"}`,             // a surrogate pair
		`{"k":"\ud83d"}`, `["\ude00\ud83d"]`,   // unpaired: encoding/json gives U+FFFD
		`["\ud800\u0041"]`, `["\uD800\uDC00"]`,
		"[\"\xff\"]", "{\"\xc3\":1}", // invalid UTF-8
		"[\"\x7f\"]", "[\"\x01\"]", // DEL is allowed, control characters are not
		`[1,]`, `{"a":1,}`, `{"a"}`, `{a:1}`, `[01]`, `[1.]`, `[.5]`, `[-]`, `[+1]`, `[1e]`, `[0x1]`,
		`[NaN]`, `[tru]`, `[nulll]`, `["a" "b"]`, `{"a":1 "b":2}`, `[1}`, `{"a":1]`, `'a'`,
		`{} x`, `{}{}`, `[] []`, `{"a":1}` + "\u00a0", "\u00a0{}", `1 2`,
		`{"a":`, `[1,2`, `"abc`, ``, ` `, `{"a":"b\`,
		strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth),
		strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1),
		strings.Repeat(`{"a":`, 10001) + "1" + strings.Repeat("}", 10001), // over encoding/json's limit
	} {
		checkSame(t, text)
	}
}

// TestDecodeDeclines pins the classes that go to encoding/json, so the callers' fallback stays
// covered.
func TestDecodeDeclines(t *testing.T) {
	for _, text := range []string{
		`{"k":"\ud83d"}`, "[\"\xff\"]", `{} x`, `{"a":`, `[1,]`,
		strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1),
	} {
		if v, ok := Decode(text); ok {
			t.Errorf("Decode(%q) = %#v, want a decline", text, v)
		}
	}
}

// TestDecodeAccepts pins inputs that must stay on the fast path: surrogate pairs (Python's
// json.dumps escapes every non-ASCII character), duplicate keys, escapes, deep-ish nesting.
func TestDecodeAccepts(t *testing.T) {
	for _, text := range []string{
		`{"emoji":"\ud83d\ude00","e":"\u00e9"}`, `{"a":1,"a":2}`, `["\n\t\"\\\/\b\f\r\u0000"]`,
		strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth),
	} {
		if _, ok := Decode(text); !ok {
			t.Errorf("Decode declined %.80q", text)
		}
		checkSame(t, text)
	}
}

// TestDecodeFixtures decodes every JSON attribute of the fixture runs and compares with
// encoding/json.
func TestDecodeFixtures(t *testing.T) {
	texts := testfixtures.JSONTexts(t)
	if len(texts) < 10 {
		t.Fatalf("only %d JSON texts in the fixtures", len(texts))
	}
	for _, text := range texts {
		if _, ok := Decode(text); !ok {
			t.Errorf("Decode declined fixture JSON %.80q", text)
		}
		checkSame(t, text)
	}
}

// TestDecodeOwnsItsValues checks that decoded strings do not share the pooled input: a second
// Decode must not change the first tree.
func TestDecodeOwnsItsValues(t *testing.T) {
	first, ok := Decode(`{"name":"first","n":12}`)
	if !ok {
		t.Fatal("declined")
	}
	if _, ok := Decode(`{"name":"XXXXX","n":99}`); !ok {
		t.Fatal("declined")
	}
	want := map[string]any{"name": "first", "n": json.Number("12")}
	if !reflect.DeepEqual(first, want) {
		t.Fatalf("first tree changed to %#v", first)
	}
}

// TestDecodeConcurrent decodes the fixtures from several goroutines at once (pooled readers,
// shared short strings) and compares each result with encoding/json; run it with -race.
func TestDecodeConcurrent(t *testing.T) {
	texts := testfixtures.JSONTexts(t)
	wants := make([]any, len(texts))
	for i, text := range texts {
		wants[i], _ = reference(text)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for round := range 20 {
				i := (g*7 + round) % len(texts)
				if got, ok := Decode(texts[i]); !ok || !reflect.DeepEqual(got, wants[i]) {
					t.Errorf("goroutine %d: fixture %d decoded differently", g, i)
					return
				}
			}
		})
	}
	wg.Wait()
}

// FuzzDecode checks Decode against encoding/json on random and mutated input, seeded with the
// fixtures' JSON attributes.
// Run: go test -run '^$' -fuzz FuzzDecode -fuzztime 60s ./internal/jsonany/
func FuzzDecode(f *testing.F) {
	for _, text := range testfixtures.JSONTexts(f) {
		f.Add(text)
	}
	for _, text := range []string{`{"a":1,"a":[true,false,null]}`, `["\ud83d\ude00","\ud800"]`, "[\"\xff\"]", `[1e5,-0.0]`} {
		f.Add(text)
	}
	f.Fuzz(checkSame)
}

// BenchmarkDecode decodes the fixtures' JSON attributes with Decode and with encoding/json.
// Run: go test -run '^$' -bench Decode -benchmem -count 3 ./internal/jsonany/
func BenchmarkDecode(b *testing.B) {
	testfixtures.BenchmarkJSONParsers(b, testfixtures.JSONTexts(b),
		testfixtures.JSONParser{Name: "jsonany", Parse: func(t string) bool { _, ok := Decode(t); return ok }},
		testfixtures.JSONParser{Name: "encoding_json", Parse: func(t string) bool { _, ok := reference(t); return ok }})
}

// A reader's table of short strings stays within maxShared however many distinct ones a
// single text holds (a cleared map keeps its buckets, so the bound must hold while it fills).
func TestSharedStringsBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString("[")
	for i := range 4 * maxShared {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`["s` + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + `",` + `"` + strconv.Itoa(i) + `"]`)
	}
	b.WriteString("]")
	text := b.String()
	r := &reader{shared: make(map[string]any)}
	r.buf.WriteString(text)
	r.dec.Reset(&r.buf)
	v, ok := r.value(0)
	if !ok {
		t.Fatal("not decoded")
	}
	if len(r.shared) > maxShared {
		t.Errorf("shared strings: %d, want at most %d", len(r.shared), maxShared)
	}
	if want, _ := reference(text); !reflect.DeepEqual(v, want) {
		t.Error("decoded value differs from encoding/json's")
	}
}

// release leaves no reference into a result in the reader's stacks, up to their capacity, after
// a decode that succeeded and after one that failed with values still pushed.
func TestReleaseClearsStacks(t *testing.T) {
	for _, text := range []string{
		`[{"a":"x","b":[1,2,{"c":"y"}]},{"d":[true,"z"]}]`,
		`[{"a":"x","b":[1,2,{"c":"y"}]},{"d":[true,"z"`,
	} {
		r := &reader{shared: make(map[string]any)}
		r.buf.WriteString(text)
		r.dec.Reset(&r.buf)
		r.value(0)
		r.release()
		for i, m := range r.members[:cap(r.members)] {
			if m != (member{}) {
				t.Errorf("%s: members[%d] = %#v after release", text, i, m)
			}
		}
		for i, e := range r.elements[:cap(r.elements)] {
			if e != nil {
				t.Errorf("%s: elements[%d] = %#v after release", text, i, e)
			}
		}
	}
}
