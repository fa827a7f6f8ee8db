package jsonany

import (
	"reflect"
	"strings"
	"testing"

	"github.com/reprise-dev/reprise/internal/testfixtures"
)

// checkFields asserts that DecodeFields gives the members named in names of what encoding/json
// decodes, declines every text encoding/json rejects or that is not an object, and declines
// an object encoding/json decodes only in a class left to it.
func checkFields(t *testing.T, text string, names ...string) {
	t.Helper()
	whole, wholeOK := reference(text)
	object, isObject := whole.(map[string]any)
	got, ok := DecodeFields(text, names...)
	switch {
	case ok && !(wholeOK && isObject):
		t.Fatalf("DecodeFields(%q) = %#v, encoding/json gives %#v (ok %v)", text, got, whole, wholeOK)
	case ok:
		want := map[string]any{}
		for _, name := range names {
			if v, found := object[name]; found {
				want[name] = v
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("DecodeFields(%q, %q) = %#v, want %#v", text, names, got, want)
		}
	case wholeOK && isObject && !leftToEncodingJSON(text):
		t.Fatalf("DecodeFields declined %q, which encoding/json decodes and no fallback class covers", text)
	}
}

var paramNames = []string{"id", "created_at", "temperature", "top_p", "max_tokens", "seed"}

func TestDecodeFieldsMatchesEncodingJSON(t *testing.T) {
	for _, text := range []string{
		`{}`, ` {"temperature":0.2,"tools":[{"type":"function","function":{"parameters":{"b":1,"a":[2]}}}]} `,
		`{"temperature":0.2,"temperature":{"x":[1]}}`, `{"seed":1,"seed":2,"top_p":null}`,
		`{"id":"resp_1","created_at":1,"model":"m"}`, `{"max_tokens":"12","stop":["a","b"]}`,
		`{"tools":[1,],"temperature":1}`, `{"tools":{"a"},"temperature":1}`, `{"tools":"\ud800"}`, // invalid where it is skipped
		`{"temperature":1} x`, `{"temperature":1}{}`, `{"temperature":`, "{\"k\":\"\xff\"}",
		`[{"temperature":1}]`, `"temperature"`, `1`, `null`, ``,
		`{"tools":` + strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth) + `}`, // too many brackets: declined
	} {
		checkFields(t, text, paramNames...)
	}
	for _, text := range testfixtures.JSONTexts(t) {
		checkFields(t, text, paramNames...)
		checkFields(t, text, "model", "messages", "tools")
	}
}

// TestDecodeFieldsSkipsOthers pins that the members not named are not built: a text whose
// other members are large decodes to the named ones only.
func TestDecodeFieldsSkipsOthers(t *testing.T) {
	text := `{"tools":[` + strings.Repeat(`{"a":{"b":[1,2,3]}},`, 50) + `{}],"temperature":0.5}`
	got, ok := DecodeFields(text, "temperature")
	if !ok || len(got) != 1 || got["temperature"] == nil {
		t.Fatalf("DecodeFields = %#v, %v", got, ok)
	}
	if none, ok := DecodeFields(text); !ok || len(none) != 0 {
		t.Fatalf("DecodeFields with no names = %#v, %v; want no member", none, ok)
	}
}

// FuzzDecodeFields checks DecodeFields against encoding/json on random and mutated text.
// Run: go test -run '^$' -fuzz FuzzDecodeFields -fuzztime 60s ./internal/jsonany/
func FuzzDecodeFields(f *testing.F) {
	for _, text := range testfixtures.JSONTexts(f) {
		f.Add(text)
	}
	f.Add(`{"temperature":0.2,"tools":[{"a":1}],"temperature":3,"id":"x"}`)
	f.Fuzz(func(t *testing.T, text string) {
		checkFields(t, text, paramNames...)
	})
}
