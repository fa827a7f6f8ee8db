package scrub

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A Python source in a JSON string in text has its triple quotes escaped (`\"\"\"`): the
// string under a secret name or a name of key material is masked whole, the escaped quotes
// kept, with the placeholder of its text with the escapes decoded, the one the same JSON
// scanned whole gives: a wrapped RSA key, the key on one line (a base64 run of 1.6 KiB), a
// password with spaces, JSON in a JSON string (`\\\"\\\"\\\"`: the `\"` inside kept), and
// a string cut before its closing quotes.
func TestEscapedTripleQuotedSecretIsMaskedWhole(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	key := rsaKey(t)
	for _, tc := range []struct{ code, value string }{
		{`client_key = \"\"\"` + wrapKey(key, 64, `\n`) + `\"\"\"\nprint(1)\n`, wrapKey(key, 64, "\n")},
		{`import os\nsigning_key = b\"\"\"` + key + `\"\"\"\n`, key},
		{`password = \"\"\"correct horse\nbattery staple\"\"\"\n`, "correct horse\nbattery staple"},
		{`DB_PASSWORD=\"\"\"say \\\"hi\\\" \"\"\"`, `say \"hi\" `}, // the Python source's escapes stay
	} {
		for _, in := range []string{
			`{"tool": "write_file", "code": "` + tc.code + `"}`,
			`2026-12-06 tool call {"code": "` + tc.code + `"} done`,
			`{"code": "` + tc.code, // cut
		} {
			var r Report
			out := s.Text(in, &r)
			assert.NotContains(t, out, strings.Fields(tc.value)[0], in[:20])
			assert.Contains(t, out, s.placeholder(KindSecretField, tc.value), "%q", in)
			assert.Contains(t, out, `\"\"\"`, "the quotes are kept")
			assert.Equal(t, map[string]int64{KindSecretField: 1}, r.Counts, in[:20])
			assert.Equal(t, out, s.Text(out, &Report{}), "idempotent")
		}
	}
	// JSON in a JSON string: the quotes are escaped twice, and the string's text once more.
	inner := `{"code": "client_key = \"\"\"` + wrapKey(key, 76, `\n`) + `\"\"\"\n"}`
	encoded, err := json.Marshal(inner)
	require.NoError(t, err)
	in := `{"result": ` + string(encoded) + `, "cut`
	out := s.Text(in, &Report{})
	assert.NotContains(t, out, key[:76])
	assert.Contains(t, out, s.placeholder(KindSecretField, wrapKey(key, 76, "\n")), in[:30])

	cut := `log {"code": "password = \"\"\"hunter2 and more`
	assert.Equal(t, `log {"code": "password = \"\"\"`+s.placeholder(KindSecretField, "hunter2 and more"), s.Text(cut, &Report{}))
	plain := `{"code": "note = \"\"\"not a secret name\"\"\"\n", "cut`
	assert.Equal(t, plain, s.Text(plain, &Report{}))
}

// A value in parentheses under a secret name is the strings inside it, which Python reads as one
// (implicit concatenation, black's long strings): they are masked together with the
// placeholder of that string, the one `password = "…"` gives, and the '(' is kept; in a JSON
// string in a log line with its escapes decoded; a string cut before its closing quote to the
// end of its line. What is no string after the '(' is read by the pair rule as before.
func TestParenthesizedStringsUnderASecretName(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	for _, tc := range []struct{ in, value string }{
		{"password = (\n    \"hunter2-but-longer\"\n)\n", "hunter2-but-longer"},
		{`DB_PASSWORD = ("s3cr3t" "more")`, "s3cr3tmore"},
		{"db_password = (  # black splits long strings\n    'hunter2-but'\n    \"-longer\"\n)\n", "hunter2-but-longer"},
		{"API_TOKEN = (\r\n    r\"hunter2\\-but\"\r\n    f'-longer'\r\n)\r\n", `hunter2\-but-longer`},
		{`2026-12-06 wrote {"code": "password = (\n    \"hunter2-but-longer\"\n)\n"} done`, "hunter2-but-longer"},
		{"password = (\n    \"hunter2-but-lon", "hunter2-but-lon"}, // cut
	} {
		assertMaskedOnce(t, s, tc.in, tc.value)
		out := s.Text(tc.in, &Report{})
		assert.Contains(t, out, s.placeholder(KindSecretField, tc.value), "%q", tc.in)
		assert.Contains(t, out, "= (", "the ( is kept: %q", tc.in)
	}
	// As on the base: the pair rule's value, the text up to the space or the end (a trailing
	// ')' stripped), or nothing for a literal in quotes.
	for _, tc := range []struct{ in, masked string }{
		{"password = get_password()", "get_password("},
		{"password=(None)", "(None"},
	} {
		want := strings.Replace(tc.in, tc.masked, s.placeholder(KindSecretField, tc.masked), 1)
		assert.Equal(t, want, s.Text(tc.in, &Report{}), tc.in)
	}
	for _, in := range []string{`password = ("None")`, "password = (\n    ''\n)"} {
		assert.Equal(t, in, s.Text(in, &Report{}), in)
	}
}

// Reading strings in parentheses is one pass, however many names and quotes the strings hold.
func TestParenthesizedStringsAreOnePass(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	for _, unit := range []string{`password=("password=(" `, `password=("x`, `password=("a" 'password=(' `, "token = (\n '#' # \n"} {
		in := strings.Repeat(unit, 1<<14)
		quickEnough(t, 2*time.Second, func() { s.assignmentSpans(in) }, unit)
	}
}

// A tuple in parentheses under a secret name (`password = ("a", "b")`) has every string masked,
// each element with the placeholder of the string Python reads for it (strings next to each
// other in one element are one), as the elements of a list under a secret name are; what is no
// string ends the tuple, and calls and tuples under other names keep their strings.
func TestTuplesUnderASecretNameHaveEveryStringMasked(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	for _, tc := range []struct {
		in     string
		values []string
	}{
		{`password = ("hunter2-first", "hunter2-second")`, []string{"hunter2-first", "hunter2-second"}},
		{"DB_PASSWORD = (\n    'old-s3cr3t',  # rotated\n    \"new\" \"-s3cr3t\",\n)\n", []string{"old-s3cr3t", "new-s3cr3t"}},
		{`api_token = ("tok-one", "tok-two", get_more())`, []string{"tok-one", "tok-two"}},
	} {
		var r Report
		out := s.Text(tc.in, &r)
		for _, v := range tc.values {
			assert.Contains(t, out, s.placeholder(KindSecretField, v), "%q", tc.in)
		}
		assert.NotContains(t, out, "s3cr3t\"", tc.in)
		assert.NotContains(t, out, "tok-", tc.in)
		assert.NotContains(t, out, "hunter2", tc.in)
		assert.Equal(t, map[string]int64{KindSecretField: int64(len(tc.values))}, r.Counts, tc.in)
		assert.Equal(t, out, s.Text(out, &Report{}), "idempotent: %q", tc.in)
	}
	for _, in := range []string{
		`user = ("alice-admin", "bob-builder")`,
		`check_password("alice-admin", "hunter2-first")`,
		`password = ("None", None)`,
	} {
		assert.Equal(t, in, s.Text(in, &Report{}), in)
	}
}
