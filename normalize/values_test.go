package normalize

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/internal/testfixtures"
)

// A value followed by a stray closing bracket is not JSON: the decoder alone stops before it.
func TestParseJSONRejectsTrailingData(t *testing.T) {
	for _, s := range []string{`"\b"]`, `{"a":1}}`, `[1]]`, `1 2`, `{} x`} {
		_, err := parseJSON(s)
		assert.ErrorContains(t, err, "trailing data", s)
	}
	v, err := parseJSON(" [1, \"a\"] \n")
	require.NoError(t, err)
	assert.Len(t, v, 2)
	_, err = parseJSON(`[{"a":`)
	assert.ErrorIs(t, err, errTruncated)
}

// sameAsStd asserts that parseJSON gives what encoding/json alone gives: the same tree, or
// the same error.
func sameAsStd(t *testing.T, s string) {
	t.Helper()
	got, gotErr := parseJSON(s)
	want, wantErr := parseJSONStd(s)
	if gotErr != nil || wantErr != nil {
		require.Equal(t, fmt.Sprint(wantErr), fmt.Sprint(gotErr), "error for %q", s)
		require.Equal(t, errors.Is(wantErr, errTruncated), errors.Is(gotErr, errTruncated), "truncation for %q", s)
		return
	}
	require.Equal(t, want, got, "tree for %q", s)
}

func TestParseJSONMatchesStd(t *testing.T) {
	texts := append(testfixtures.JSONTexts(t),
		`{"a":1}`+"\u00a0\v", "\u00a0{}", `1`+"\u0085", `{"a":1,"a":"\ud83d"}`, "[\"\xff\"]", `[1,2`, `"x`, ``, `{} x`)
	for _, s := range texts {
		sameAsStd(t, s)
	}
}

// FuzzParseJSON checks parseJSON against encoding/json alone on random and mutated input,
// seeded with the fixtures' JSON attributes.
// Run: go test -run '^$' -fuzz FuzzParseJSON -fuzztime 60s -fuzzminimizetime 50x ./normalize/
// (without the last flag the fuzzer stops for seconds to minimize each new multi-KiB input).
func FuzzParseJSON(f *testing.F) {
	for _, s := range testfixtures.JSONTexts(f) {
		f.Add(s)
	}
	f.Add(`{"a":1} ` + "\u00a0")
	f.Fuzz(sameAsStd)
}

// BenchmarkParseJSON parses the fixtures' JSON attributes with parseJSON and with encoding/json
// alone (parseJSONStd).
// Run: go test -run '^$' -bench ParseJSON -benchmem -count 3 ./normalize/
func BenchmarkParseJSON(b *testing.B) {
	testfixtures.BenchmarkJSONParsers(b, testfixtures.JSONTexts(b),
		testfixtures.JSONParser{Name: "jsonany", Parse: func(s string) bool { _, err := parseJSON(s); return err == nil }},
		testfixtures.JSONParser{Name: "encoding_json", Parse: func(s string) bool { _, err := parseJSONStd(s); return err == nil }})
}
