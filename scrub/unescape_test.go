package scrub

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/reprise-dev/reprise/scrub/scrubtest"
)

// jsonQuoted is v as the inside of a JSON string (no quotes around it), as an encoder writes it.
func jsonQuoted(t testing.TB, v string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(strings.TrimSuffix(b.String(), "\n"), `"`)[1:]
}

// JSON that is not whole (cut at an attribute length limit) is scanned as text: a planted value
// after an escape (\n, \t, \u00e9 …) must still be found.
func TestEscapesInJSONThatIsNotWholeHideNothing(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	for _, p := range scrubtest.Planted {
		for _, sep := range []string{"\n", "\t", "\r\n", "\""} {
			content := jsonQuoted(t, "text"+sep+p.Text+sep+"more")
			cut := `{"messages":[{"role":"user","content":"` + content // no end: cut at a limit
			out := s.Text(cut, &Report{})
			assert.NotContains(t, out, jsonQuoted(t, p.Must()), "%s after %q", p.Kind, sep)
			assert.Equal(t, out, s.Text(out, &Report{}), "idempotent")
		}
	}
	for _, tc := range []struct{ in, secret string }{
		{`{"content":"m\u00fcller@ex\u00e4mple.de`, `m\u00fcller@ex\u00e4mple.de`},
		{`{"content":"fran\u00e7ois.dupont@example.com`, `fran\u00e7ois`},
		{`said {"email":"alice\u0040example.com"} and`, `alice\u0040example`},
		{`{"a":"{\"content\":\"key\\nsk-proj-Xq3vT8pL2mN9rB4wK7yZ1aC5dF0gH6jE`, "sk-proj-Xq3vT8pL2mN9rB4wK7yZ1aC5dF0gH6jE"},
		{`{"c":"password\u003dhunter2`, "hunter2"},
		{`{"c":"db postgres:\/\/app:Sup3rS3cretPw@db.internal\/x`, "Sup3rS3cretPw"},
		{`{"c":"emoji \ud83d\ude00\n4111111111111111`, "4111111111111111"},
	} {
		out := s.Text(tc.in, &Report{})
		assert.NotContains(t, out, tc.secret, tc.in)
		assert.Equal(t, out, s.Text(out, &Report{}), "idempotent")
	}
}

func TestPlainViewMapsEachByteBack(t *testing.T) {
	v := `a\nb\u00e9c\\u0040\ud83d\ude00\q\` + "\u00a0x\u200by＠"
	view, at := plainView(v)
	assert.Equal(t, "a\nbéc@\U0001F600\\q\\ xy@", view)
	assert.Len(t, at, len(view)+1)
	assert.Equal(t, []int{0, 1, 3, 4, 4, 10, 11, 18, 18, 18, 18, 30, 31, 32, 33, 35, 39, 40, 43}, at)
}

// FuzzEscapedText: a planted value written into a JSON string that is cut short (so scanned as
// text), between any texts, never survives in its escaped form.
// Run: go test -run '^$' -fuzz FuzzEscapedText -fuzztime 60s ./scrub/
func FuzzEscapedText(f *testing.F) {
	f.Add("hello", "world", uint8(0), uint8(0))
	f.Add("café\u00e9", "ünïcode", uint8(3), uint8(1))
	s := newScrubber(f, Config{Enabled: true, Key: "fuzz"})
	seps := []string{"\n", "\t", "\r\n", " ", "\"", "\n\n"}
	f.Fuzz(func(t *testing.T, before, after string, which, sep uint8) {
		p := scrubtest.Planted[int(which)%len(scrubtest.Planted)]
		if p.Kind == "pem_private_key" || strings.ContainsAny(before+after, "\\<>") {
			return // a key without END line takes what follows; placeholders are kept as they are
		}
		d := seps[int(sep)%len(seps)]
		in := `{"content":"` + jsonQuoted(t, before+d+p.Text+d+after)
		if out := s.Text(in, &Report{}); strings.Contains(out, jsonQuoted(t, p.Must())) {
			t.Fatalf("%s survived:\n in: %q\nout: %q", p.Kind, in, out)
		}
	})
}

// Text decoded from base64 is scanned as any text is: its escapes and look-alikes too.
func TestBase64TextIsScannedLikeText(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	for _, in := range []string{
		`{"messages":[{"content":"hi\nsk-proj-Xq3vT8pL2mN9rB4wK7yZ1aC5dF0gH6jE"}]}`,
		"tel 06\u00a012\u00a034\u00a056\u00a078",
	} {
		b64 := base64.StdEncoding.EncodeToString([]byte(in))
		var r Report
		out := s.Text("payload "+b64, &r)
		assert.NotContains(t, out, b64, in)
		assert.NotEmpty(t, r.Counts, in)
	}
}
