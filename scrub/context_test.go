package scrub

import (
	"encoding/base64"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// In whole JSON, credential rules that need the name in front of the value still find it, and
// give the placeholder the same text gets in prose.
func TestJSONValuesAreFoundWithTheirNames(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	for _, tc := range []struct{ in, secret, kind string }{
		{`{"client_key": "8dyfuiRyq=vVc3RRr_edRk-fK__JItpZ"}`, "8dyfuiRyq=vVc3RRr_edRk-fK__JItpZ", "generic_api_key"},
		{`{"tool":"setup","arguments":{"access_key":"Zk2Wq9Lm3Xr7Tb1Vc5Nd8Fg0Hj4Kp6Rs","region":"eu"}}`, "Zk2Wq9Lm3Xr7Tb1Vc5Nd8Fg0Hj4Kp6Rs", "generic_api_key"},
		{`[{"aws":{"id":"x","value":"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}}]`, "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "aws_secret_access_key"},
		{`{"aws":{"v":"wJalrXUtnFEMI\/K7MDENG\/bPxRfiCYEXAMPLEKEY"}}`, "K7MDENG", "aws_secret_access_key"},
	} {
		var r Report
		out := s.Text(tc.in, &r)
		assert.NotContains(t, out, tc.secret, tc.in)
		assert.Equal(t, map[string]int64{tc.kind: 1}, r.Counts, tc.in)
		assert.Equal(t, out, s.Text(out, &Report{}), "idempotent")
		_, whole := wholeJSON(out)
		assert.True(t, whole, "still JSON: %s", out)
	}
	prose := s.Text(`client_key = "8dyfuiRyq=vVc3RRr_edRk-fK__JItpZ"`, &Report{})
	assert.Contains(t, s.Text(`{"client_key": "8dyfuiRyq=vVc3RRr_edRk-fK__JItpZ"}`, &Report{}), prose[len(`client_key = "`):len(prose)-1])
	plain := `{"model":"gpt-4o","max_tokens":512,"api_version":"2024-10-21","messages":[{"role":"user","content":"hi"}]}`
	assert.Equal(t, plain, s.Text(plain, &Report{}))
}

// Attributes too: a value whose name gives it away is found with its name.
func TestAttributesAreFoundWithTheirNames(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("client_key", "8dyfuiRyq=vVc3RRr_edRk-fK__JItpZ")
	sp := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	sp.Attributes().PutStr("gen_ai.request.model", "gpt-4o")
	sp.Attributes().PutEmptyMap("tool.config").PutStr("access_key", "Zk2Wq9Lm3Xr7Tb1Vc5Nd8Fg0Hj4Kp6Rs")
	var r Report
	s.Traces(td, &r)
	b, err := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
	require.NoError(t, err)
	assert.NotContains(t, string(b), "8dyfuiRyq")
	assert.NotContains(t, string(b), "Zk2Wq9Lm3")
	assert.Contains(t, string(b), "gpt-4o")
	assert.Equal(t, map[string]int64{"generic_api_key": 2}, r.Counts)
	var counted Report
	s.CountTraces(td, &counted)
	assert.Equal(t, r.Counts, counted.Counts)
}

// A value longer than 256 bytes under a name that needs to be read with it (access_key, auth)
// is found as an attribute and as a JSON value, as it is in text written `access_key = "…"`;
// long values under other names (a URL, base64 data) are not written out with their names.
func TestLongValuesAreFoundWithTheirNames(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	long := strings.Repeat("Rj0aF7XfBTbjtIPq9Lm3Xr7Tb1Vc5Nd8", 10) // 320 bytes
	inText := s.Text(`access_key = "`+long+`"`, &Report{})
	require.NotContains(t, inText, long, "text finds it")
	for _, in := range []string{`{"access_key": "` + long + `"}`, `{"tool":{"auth":{"client_key":"` + long + `"}}}`} {
		var r Report
		out := s.Text(in, &r)
		assert.NotContains(t, out, long[:64], in)
		assert.Equal(t, map[string]int64{"generic_api_key": 1}, r.Counts, in)
		assert.Equal(t, out, s.Text(out, &Report{}), "idempotent")
	}
	td := ptrace.NewTraces()
	attrs := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty().Attributes()
	attrs.PutStr("access_key", long)
	other := strings.Repeat("Zk2Wq9Lm3Xr7Tb1Vc5Nd8Fg0Hj4Kp6Rs", 10)
	attrs.PutStr("url.full", "https://example.com/static/"+other+"/app.js")
	attrs.PutStr("image", other)
	var r Report
	s.Traces(td, &r)
	assert.Equal(t, map[string]int64{"generic_api_key": 1}, r.Counts)
	assert.Contains(t, inText, s.placeholder("generic_api_key", long), "the placeholder of the text")
	assert.NotEqual(t, long, attrs.AsRaw()["access_key"])
	assert.Equal(t, other, attrs.AsRaw()["image"], "not named: kept")
	assert.Contains(t, attrs.AsRaw()["url.full"], other)
}

// opaqueBase64 is n bytes of random-looking base64 that decodes to no text (a DER key, an
// image), the same on every run, starting with a letter or digit as a key's base64 does.
func opaqueBase64(t *testing.T, n int) string {
	raw := make([]byte, n*3/4)
	rng := rand.New(rand.NewPCG(7, uint64(n)))
	for i := range raw {
		raw[i] = byte(rng.Uint32())
	}
	raw[0] = 0x30 // "M…", as a DER key starts
	v := base64.StdEncoding.EncodeToString(raw)
	_, isText := decodeBase64Text(v)
	require.False(t, isText)
	return v
}

// A base64 value of 1 KiB or more that is no text is binary data, skipped by the text rules,
// unless its name is written in front of it: under a secret name it is masked whole, whatever
// its length, as the JSON walk masks it; under a name the credential rules read with the value
// (access_key) it is scanned with its name up to maxNamedValue, in text, as a JSON value and
// as an attribute, with one placeholder. Longer, it is data and kept; under a name of key
// material it is masked whole (TestLongKeyMaterialIsMaskedWhole); unnamed, it is data and kept.
func TestLongBase64ValuesAreReadWithTheirNames(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	key := opaqueBase64(t, 1536)
	for _, in := range []string{
		"private_key: " + key,
		"api_key=" + key + "&x=1",
		`the tool said {"private_key": "` + key + `", "user": "bob"} and stopped`,
		"PASSWORD='" + key + "'",
		"private_key: " + opaqueBase64(t, 12<<10),
	} {
		var r Report
		out := s.Text(in, &r)
		assert.NotContains(t, out, key[:64], in[:20])
		assert.Equal(t, map[string]int64{KindSecretField: 1}, r.Counts, in[:20])
		assert.Equal(t, out, s.Text(out, &Report{}), "idempotent")
	}
	assert.Equal(t, "private_key: "+s.placeholder(KindSecretField, key), s.Text("private_key: "+key, &Report{}))

	named := s.Text(`access_key = "`+key+`"`, &Report{})
	want := s.placeholder("generic_api_key", key)
	assert.Equal(t, `access_key = "`+want+`"`, named)
	assert.Equal(t, `{"access_key":"`+want+`"}`, s.Text(`{"access_key": "`+key+`"}`, &Report{}))
	td := ptrace.NewTraces()
	attrs := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty().Attributes()
	attrs.PutStr("access_key", key)
	long := opaqueBase64(t, 12<<10)
	attrs.PutStr("image_key", long)
	image := opaqueBase64(t, 2048)
	attrs.PutStr("image", image)
	var r Report
	s.Traces(td, &r)
	assert.Equal(t, map[string]int64{"generic_api_key": 1}, r.Counts)
	assert.Equal(t, want, attrs.AsRaw()["access_key"])
	assert.Equal(t, long, attrs.AsRaw()["image_key"], "longer than maxNamedValue, no key material's name: data")
	assert.Equal(t, image, attrs.AsRaw()["image"], "not named: data")

	for _, in := range []string{
		"image_key: " + long,
		`{"cache_key": "` + long + `"}`,
		"image: " + key,
		"here is the picture " + key,
	} {
		assert.Equal(t, in, s.Text(in, &Report{}), in[:20])
	}
}

// Key material of opaqueRun or more under a name like signing_key is masked whole, however
// long, in text, as a JSON value and as an attribute, with one placeholder, in one pass over it:
// 1 MiB in well under a second each. Below maxNamedValue too: the credential rules find such a
// key or not by its bytes (the ones of 1600, 2400 and 4096 bytes here they do not).
func TestLongKeyMaterialIsMaskedWhole(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	for _, n := range []int{1600, 2400, 4096, 12 << 10, 1 << 20} {
		key := opaqueBase64(t, n)
		want := s.placeholder(KindSecretField, key)
		for _, in := range []string{
			"signing_key: " + key,
			`tls.private_key = "` + key + `"`,
			`{"signing_key": "` + key + `"}`,
			`the config said {"jwt": {"ENCRYPTION_KEY": "` + key + `"}, "user": "bob"} and stopped`,
			"export SSH_KEY=" + key + "\nnext=1",
		} {
			var r Report
			var out string
			quickEnough(t, time.Second, func() { r = Report{}; out = s.Text(in, &r) }, "%s, %d bytes", in[:20], n)
			assert.NotContains(t, out, key[:64], in[:20])
			assert.Contains(t, out, want, in[:20])
			assert.Equal(t, map[string]int64{KindSecretField: 1}, r.Counts, in[:20])
		}
		td := ptrace.NewTraces()
		attrs := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty().Attributes()
		quickEnough(t, time.Second, func() { attrs.PutStr("tls.signing_key", key); s.Traces(td, &Report{}) }, "attribute, %d bytes", n)
		assert.Equal(t, want, attrs.AsRaw()["tls.signing_key"])
	}
}

// Key material in a list under a name of key material is masked as the value alone is: in
// JSON, in text that holds JSON, and in an attribute array, with the placeholder of the value.
func TestKeyMaterialInAList(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	key := opaqueBase64(t, 2048)
	want := s.placeholder(KindSecretField, key)
	for _, in := range []string{
		`{"signing_key": ["` + key + `"]}`,
		`{"tls": {"signing_key": [["` + key + `"], "RS256"]}}`,
		`the tool said {"signing_key": ["` + key + `"]} and stopped`,
		"signing_key: [ '" + key + "' ]",
	} {
		var r Report
		out := s.Text(in, &r)
		assert.NotContains(t, out, key[:64], in[:20])
		assert.Contains(t, out, want, in[:20])
		assert.Equal(t, map[string]int64{KindSecretField: 1}, r.Counts, in[:20])
		assert.Equal(t, out, s.Text(out, &Report{}), "idempotent")
	}
	td := ptrace.NewTraces()
	attrs := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty().Attributes()
	list := attrs.PutEmptySlice("ssh_key")
	list.AppendEmpty().SetStr(key)
	list.AppendEmpty().SetStr("ed25519")
	image := attrs.PutEmptySlice("image_key")
	image.AppendEmpty().SetStr(key)
	var r Report
	s.Traces(td, &r)
	assert.Equal(t, map[string]int64{KindSecretField: 1}, r.Counts)
	assert.Equal(t, []any{want, "ed25519"}, attrs.AsRaw()["ssh_key"])
	assert.Equal(t, []any{key}, attrs.AsRaw()["image_key"], "no key material's name: data")
}

// wrapKey writes key in lines of width characters joined by lineBreak.
func wrapKey(key string, width int, lineBreak string) string {
	var lines []string
	for len(key) > width {
		lines, key = append(lines, key[:width]), key[width:]
	}
	return strings.Join(append(lines, key), lineBreak)
}

// Key material wrapped in lines of 64 or 76 characters without PEM lines, under a name of key
// material, is masked whole with one placeholder, that of the key with real line breaks: with
// newlines in text, with `\n` escapes in a JSON string in text, and as a JSON value or an
// attribute. Unwrapped it is masked too (another placeholder). Text after the key stays.
func TestWrappedKeyMaterialIsMaskedWhole(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	for _, n := range []int{1100, 1600, 2400, 4096, 12 << 10} {
		key := opaqueBase64(t, n)
		for _, width := range []int{64, 76} {
			for _, lb := range []string{"\n", "\r\n", `\n`} {
				wrapped := wrapKey(key, width, lb)
				read := wrapKey(key, width, strings.ReplaceAll(strings.ReplaceAll(lb, `\r`, "\r"), `\n`, "\n"))
				for _, in := range []string{
					"signing_key: " + wrapped + lb + "next: 1",
					`the config said {"tls": {"ssh_key": "` + wrapped + `"}, "user": "bob"} and stopped`,
					"SIGNING_KEY=" + wrapped,
				} {
					var r Report
					out := s.Text(in, &r)
					for line := range strings.SplitSeq(wrapped, lb) {
						require.NotContains(t, out, line, "%d %d %q %s", n, width, lb, in[:12])
					}
					assert.Contains(t, out, s.placeholder(KindSecretField, read), in[:12])
					assert.Equal(t, map[string]int64{KindSecretField: 1}, r.Counts, in[:12])
					assert.Equal(t, out, s.Text(out, &Report{}), "idempotent")
					assert.True(t, strings.HasSuffix(out, in[strings.LastIndex(in, wrapped)+len(wrapped):]), "the rest stays: %q", out[len(out)-20:])
				}
			}
			wrapped := wrapKey(key, width, "\n")
			want := s.placeholder(KindSecretField, wrapped)
			var r Report
			out := s.Text(`{"signing_key": "`+strings.ReplaceAll(wrapped, "\n", `\n`)+`\n"}`, &r)
			assert.Equal(t, `{"signing_key":"`+s.placeholder(KindSecretField, wrapped+"\n")+`"}`, out)
			td := ptrace.NewTraces()
			attrs := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty().Attributes()
			attrs.PutStr("tls.signing_key", wrapped)
			s.Traces(td, &Report{})
			assert.Equal(t, want, attrs.AsRaw()["tls.signing_key"])
		}
		assert.NotContains(t, s.Text("signing_key: "+key, &Report{}), key[:64], "unwrapped")
	}
	// Lines of another width, a short key, text, and other names are not masked as key
	// material (the first line is read with its name by the rules that need one).
	key := opaqueBase64(t, 2048)
	for _, in := range []string{
		"image_key: " + wrapKey(key, 64, "\n"),
		"signing_key: " + wrapKey(key[:900], 64, "\n"),
		"signing_key: " + wrapKey(key, 60, "\n"),
		"signing_key: " + wrapKey(strings.Repeat("QUJD", 400), 64, "\n"),
	} {
		out := s.Text(in, &Report{})
		assert.NotContains(t, out, KindSecretField, in[:20])
		assert.Contains(t, out, in[strings.IndexByte(in, '\n'):], in[:20])
	}
}
