package jsonany

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/reprise-dev/reprise/internal/testfixtures"
)

// expand replaces every Text in v by the tree it stands for.
func expand(t *testing.T, v any) any {
	switch x := v.(type) {
	case Text:
		tree, ok := reference(string(x))
		if !ok {
			t.Fatalf("kept text %q is not JSON", x)
		}
		return tree
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = expand(t, e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = expand(t, e)
		}
		return out
	}
	return v
}

var keptNames = []string{"parameters", "input_schema", "b"}

// checkKeeping asserts that DecodeKeeping gives the tree encoding/json decodes once its Texts
// are expanded, that Encode and json.Marshal write it as they write that tree, and that it
// declines only what encoding/json rejects or a class left to it.
func checkKeeping(t *testing.T, text string) {
	t.Helper()
	want, wantOK := reference(text)
	got, ok := DecodeKeeping(text, keptNames...)
	switch {
	case ok && !wantOK:
		t.Fatalf("DecodeKeeping accepted %q, encoding/json rejects it", text)
	case !ok && wantOK && !leftToEncodingJSON(text):
		t.Fatalf("DecodeKeeping declined %q, which encoding/json decodes and no fallback class covers", text)
	case !ok:
		return
	}
	if expanded := expand(t, got); !reflect.DeepEqual(expanded, want) {
		t.Fatalf("DecodeKeeping(%q) expands to %#v, encoding/json gives %#v", text, expanded, want)
	}
	wantText, _ := encodeReference(want)
	if gotText, ok := Encode(got); !ok || gotText != wantText {
		t.Fatalf("Encode of the kept tree of %q = %q (%v), want %q", text, gotText, ok, wantText)
	}
	if gotText, _ := encodeReference(got); gotText != wantText {
		t.Fatalf("encoding/json writes the kept tree of %q as %q, want %q", text, gotText, wantText)
	}
	gotMarshal, err1 := json.Marshal(got)
	wantMarshal, err2 := json.Marshal(want)
	if err1 != nil || err2 != nil || string(gotMarshal) != string(wantMarshal) {
		t.Fatalf("json.Marshal of the kept tree of %q = %s, want %s", text, gotMarshal, wantMarshal)
	}
}

func TestDecodeKeepingMatchesDecode(t *testing.T) {
	for _, text := range []string{
		`{"type":"function","function":{"name":"f","parameters":{"type":"object","b":{"z":1,"a":"<&>"}}}}`,
		`{"parameters":null,"input_schema":"text","b":1.5}`, `{"parameters":[{"b":{"c":[]}}],"parameters":{}}`,
		`[{"b":{"y":1,"x":2}},{"b":[]}]`, `{"a":{"parameters":{"k":"\u2028"}}}`,
		`{"parameters":{"k":"\ud800"}}`, `{"parameters":{"a":1,}}`, `{"parameters":{}} x`, // declined
	} {
		checkKeeping(t, text)
	}
	for _, text := range append(testfixtures.JSONTexts(t), toolSchemas()...) {
		checkKeeping(t, text)
	}
	v, ok := DecodeKeeping(`{"function":{"parameters":{"b":1,"a":2}}}`, "parameters")
	if !ok || v.(map[string]any)["function"].(map[string]any)["parameters"] != Text(`{"a":2,"b":1}`) {
		t.Fatalf("the schema was not kept as its text: %#v", v)
	}
}

// FuzzDecodeKeeping checks DecodeKeeping against encoding/json on random and mutated text.
// Run: go test -run '^$' -fuzz FuzzDecodeKeeping -fuzztime 60s ./internal/jsonany/
func FuzzDecodeKeeping(f *testing.F) {
	for _, text := range append(testfixtures.JSONTexts(f), toolSchemas()...) {
		f.Add(text)
	}
	f.Add(`{"parameters":{"b":[1,{"b":2}],"a":"x"},"b":["<"]}`)
	f.Fuzz(checkKeeping)
}
