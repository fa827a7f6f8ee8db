package jsonany

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/reprise-dev/reprise/internal/testfixtures"
)

// encodeReference is what Encode promises to match: encoding/json's Encoder with
// SetEscapeHTML(false), without its newline.
func encodeReference(v any) (string, bool) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return "", false
	}
	return strings.TrimSuffix(b.String(), "\n"), true
}

// canonicalReference is Canonical by encoding/json alone: decoded with UseNumber, encoded back.
func canonicalReference(raw []byte) (string, bool) {
	v, ok := reference(string(raw))
	if !ok {
		return "", false
	}
	return encodeReference(v)
}

// checkEncode asserts that Encode writes v as encoding/json does, or declines a value
// encoding/json rejects or one outside the values Decode returns.
func checkEncode(t *testing.T, v any) {
	t.Helper()
	want, wantOK := encodeReference(v)
	got, gotOK := Encode(v)
	switch {
	case gotOK && !wantOK:
		t.Fatalf("Encode(%#v) = %q, encoding/json rejects it", v, got)
	case gotOK && got != want:
		t.Fatalf("Encode(%#v) = %q, encoding/json writes %q", v, got, want)
	}
	checkMarshal(t, v)
}

// checkMarshal asserts that Marshal gives what encoding/json gives for v: its text, or an error.
func checkMarshal(t *testing.T, v any) {
	t.Helper()
	want, wantOK := encodeReference(v)
	got, err := Marshal(v)
	if (err == nil) != wantOK || got != want {
		t.Fatalf("Marshal(%#v) = %q, %v; encoding/json writes %q (ok %v)", v, got, err, want, wantOK)
	}
}

// checkCanonical asserts that Canonical agrees with decoding and encoding by encoding/json, and
// that it takes every text Decode takes.
func checkCanonical(t *testing.T, text string) {
	t.Helper()
	want, wantOK := canonicalReference([]byte(text))
	got, gotOK := Canonical([]byte(text))
	_, decoded := Decode(text)
	switch {
	case gotOK && !wantOK:
		t.Fatalf("Canonical(%q) = %q, encoding/json rejects the text", text, got)
	case gotOK && got != want:
		t.Fatalf("Canonical(%q) = %q, encoding/json gives %q", text, got, want)
	case gotOK != decoded:
		t.Fatalf("Canonical(%q) ok=%v, Decode ok=%v", text, gotOK, decoded)
	}
	if gotOK {
		again, ok := Canonical([]byte(got))
		if !ok || again != got {
			t.Fatalf("Canonical is not idempotent on %q: %q, %v", got, again, ok)
		}
	}
}

func TestEncodeMatchesEncodingJSON(t *testing.T) {
	var every strings.Builder // every ASCII byte, then the characters encoding/json treats apart
	for b := range 0x80 {
		every.WriteByte(byte(b))
	}
	every.WriteString("\u2028\u2029\u00e9\U0001F600<>&\xff\xc3(\xed\xa0\x80")
	for _, v := range []any{
		nil, true, false, "", every.String(), "\xf0\x9f\x98", // a truncated 4-byte sequence
		json.Number("0"), json.Number("-1.5E-7"), json.Number("1e400"), json.Number(""),
		map[string]any{}, map[string]any(nil), []any{}, []any(nil),
		map[string]any{"b": 1.5}, []any{int64(1)}, []any{[]byte("x")}, // left to encoding/json
		map[string]any{"b": []any{"x", json.Number("2"), nil}, "a": map[string]any{"z": true, "y": "\n"}, "": "empty name"},
		map[string]any{"\u00e9": 1 == 1, "e": false, "E": nil, "\xff": "invalid name", "a\u2028": "x"},
		map[string]any{"a": []any{map[string]any{"d": "1", "c": "2"}, map[string]any{}}},
	} {
		checkEncode(t, v)
	}
}

// TestEncodeDeclines pins what Encode leaves to encoding/json: numbers that are not JSON
// (encoding/json rejects them), Go numbers and bytes (not what Decode returns), and nesting
// deeper than Decode's.
func TestEncodeDeclines(t *testing.T) {
	deep := any("x")
	for range maxDepth + 1 {
		deep = []any{deep}
	}
	for _, v := range []any{
		json.Number("01"), json.Number("1."), json.Number("+1"), json.Number("NaN"), json.Number("1e"), json.Number("-"),
		1.5, math.Inf(1), int64(3), []byte("x"), map[string]string{"a": "b"}, struct{}{},
		map[string]any{"a": 1.5}, deep,
	} {
		if got, ok := Encode(v); ok {
			t.Errorf("Encode(%#v) = %q, want a decline", v, got)
		}
		checkMarshal(t, v) // what Encode declines, encoding/json writes or refuses
	}
	if _, ok := Encode(json.Number("-0.5e+10")); !ok {
		t.Error("Encode declined a valid number")
	}
}

func TestCanonicalMatchesEncodingJSON(t *testing.T) {
	for _, text := range []string{
		`{}`, `[]`, `null`, `true`, `"s"`, `0`, ` {"b":1,"a":2} `, "\t[1,2]\r\n",
		`{"a":1,"a":2}`, `{"b":{"d":[],"c":{}},"a":[{"z":1,"y":2}]}`,
		`{"k":"\u00e9\n\t\"\\\/\b\f\r\u0000\u001f\u2028<>&"}`, `{"emoji":"\ud83d\ude00"}`,
		`{"type":"object","properties":{"unit":{"enum":["celsius","fahrenheit"],"type":"string"},"city":{"type":"string"}},"required":["city"]}`,
		"[\"line\u2028\", \"paragraph\u2029\", \"\u00e9\"]", "{\"\u2029\":\"name\"}", // the separators written raw
		`{"k":"\ud83d"}`, "[\"\xff\"]", `{} x`, `[1,]`, ``, // declined by Decode
	} {
		checkCanonical(t, text)
	}
	for _, text := range append(testfixtures.JSONTexts(t), toolSchemas()...) {
		if _, ok := Canonical([]byte(text)); !ok {
			t.Errorf("Canonical declined fixture JSON %.80q", text)
		}
		checkCanonical(t, text)
	}
}

// TestEncodeConcurrent encodes the fixtures from several goroutines at once (pooled writers);
// run it with -race.
func TestEncodeConcurrent(t *testing.T) {
	texts := testfixtures.JSONTexts(t)
	wants := make([]string, len(texts))
	for i, text := range texts {
		wants[i], _ = canonicalReference([]byte(text))
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for round := range 20 {
				i := (g*7 + round) % len(texts)
				if got, ok := Canonical([]byte(texts[i])); !ok || got != wants[i] {
					t.Errorf("goroutine %d: fixture %d encoded as %q, want %q", g, i, got, wants[i])
					return
				}
			}
		})
	}
	wg.Wait()
}

// FuzzCanonical checks Canonical against encoding/json on random and mutated text, and Encode
// on a string of random bytes (invalid UTF-8 included) and on an object named by them.
// Run: go test -run '^$' -fuzz FuzzCanonical -fuzztime 60s ./internal/jsonany/
func FuzzCanonical(f *testing.F) {
	for _, text := range testfixtures.JSONTexts(f) {
		f.Add(text)
	}
	for _, text := range []string{`{"b":1,"a":[true,false,null],"a":{}}`, `["\ud83d\ude00","\u2029"]`, "[\"\xff\"]", `[1e5,-0.0]`} {
		f.Add(text)
	}
	f.Fuzz(func(t *testing.T, text string) {
		checkCanonical(t, text)
		checkEncode(t, text)
		checkEncode(t, map[string]any{text: []any{text, json.Number(text)}})
	})
}

// toolSchemas is a production-shaped set of texts: twenty function schemas of about 1.2 KB
// each (nested objects, enums, descriptions, written in the order an SDK serializes them, not
// sorted), such as an agent offers on every model call and a recorded request repeats.
func toolSchemas() []string {
	out := make([]string, 20)
	for i := range out {
		var b strings.Builder
		fmt.Fprintf(&b, `{"type":"object","description":"Arguments of tool %d, which looks records up by several filters.","properties":{`, i)
		for p := range 8 {
			if p > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `"field_%d_%d":{"type":"string","description":"Filter %d: a value the user named, or \"any\".","enum":["alpha","beta","gamma","delta"],"default":"any"}`, i, p, p)
		}
		fmt.Fprintf(&b, `,"options":{"type":"object","properties":{"limit":{"type":"integer","minimum":1,"maximum":100},"sort":{"type":"string"}},"required":["limit"]}},"required":["field_%d_0"],"additionalProperties":false}`, i)
		out[i] = b.String()
	}
	return out
}

// BenchmarkCanonical canonicalizes the fixtures' JSON attributes, and toolSchemas, with
// Canonical and with encoding/json (decoded into an `any` with UseNumber, encoded back).
// Run: go test -run '^$' -bench Canonical -benchmem -count 3 ./internal/jsonany/
func BenchmarkCanonical(b *testing.B) {
	for _, set := range []struct {
		name  string
		texts []string
	}{{"fixtures", testfixtures.JSONTexts(b)}, {"tool_schemas", toolSchemas()}} {
		raws := make([][]byte, len(set.texts))
		for i, text := range set.texts {
			raws[i] = []byte(text)
		}
		for _, c := range []struct {
			name string
			fn   func([]byte) (string, bool)
		}{{"jsonany", Canonical}, {"encoding_json", canonicalReference}} {
			b.Run(set.name+"/"+c.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					for _, raw := range raws {
						if _, ok := c.fn(raw); !ok {
							b.Fatal("declined")
						}
					}
				}
			})
		}
	}
}
