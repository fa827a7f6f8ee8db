package scrub

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.yaml.in/yaml/v3"
)

// rsaKeyBase64 is a new RSA-2048 private key in PKCS#8 DER, base64 without line breaks: what
// `openssl pkcs8 -topk8 -outform DER | base64 -w0` writes, 1.6 KiB starting "MIIE". (An ECDSA
// key is shorter than opaqueRun: 184 characters for P-256.)
var rsaKeyBase64 = sync.OnceValues(func() (string, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return "", err
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	return base64.StdEncoding.EncodeToString(der), err
})

func rsaKey(t *testing.T) string {
	key, err := rsaKeyBase64()
	require.NoError(t, err)
	return key
}

// yamlValue returns the string YAML reads under a name ending in _key in in, at any depth, and
// all it reads.
func yamlValue(t *testing.T, in string) (string, any) {
	var parsed any
	require.NoError(t, yaml.Unmarshal([]byte(in), &parsed), in)
	var find func(v any) string
	find = func(v any) string {
		switch t := v.(type) {
		case map[string]any:
			for k, e := range t {
				if str, ok := e.(string); ok && strings.HasSuffix(k, "_key") {
					return str
				}
			}
			for _, e := range t {
				if str := find(e); str != "" {
					return str
				}
			}
		case []any:
			for _, e := range t {
				if str := find(e); str != "" {
					return str
				}
			}
		}
		return ""
	}
	value := find(parsed)
	require.NotEmpty(t, value, in)
	return value, parsed
}

// assertYAMLKeyMasked checks that the key material in the YAML document before+lines+after is
// masked as the value YAML reads: lines becomes its placeholder, counted once, and the output
// scrubs to itself; the JSON a YAML parser makes of the document, and an attribute that holds
// the value, get the same placeholder. It returns the output.
func assertYAMLKeyMasked(t *testing.T, s *Scrubber, before, lines, after string) string {
	t.Helper()
	in := before + lines + after
	read, parsed := yamlValue(t, in)
	want := s.placeholder(KindSecretField, read)
	var r Report
	out := s.Text(in, &r)
	assert.Equal(t, before+want+after, out, "%q", in[:24])
	assert.Equal(t, map[string]int64{KindSecretField: 1}, r.Counts, in[:24])
	assert.Equal(t, out, s.Text(out, &Report{}), "idempotent")
	asJSON, err := json.Marshal(parsed)
	require.NoError(t, err)
	assert.Contains(t, s.Text(string(asJSON), &Report{}), want, "the JSON YAML makes of %q", in[:24])
	td := ptrace.NewTraces()
	attrs := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty().Attributes()
	attrs.PutStr("tls.signing_key", read)
	s.Traces(td, &Report{})
	assert.Equal(t, want, attrs.AsRaw()["tls.signing_key"], "as an attribute: %q", in[:24])
	return out
}

// Wrapped key material in YAML has its lines below the first indented: a plain, double-quoted
// or single-quoted scalar over lines, in a block or a flow mapping, also with `\` ending each
// line of a double-quoted one. Every line is masked, with the placeholder of the value YAML reads
// (the lines joined by spaces, or by nothing after `\`), the one the JSON a YAML parser makes
// of it gets, and the one the same value gets as an attribute; the text after the key stays.
func TestIndentedWrappedKeyHasTheValueYAMLReads(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	key := rsaKey(t)
	for _, width := range []int{64, 76} {
		for _, tc := range []struct{ before, lineBreak, after string }{
			{"signing_key: ", "\n  ", "\nnext: 1\n"},
			{"tls:\n  signing_key: ", "\n    ", "\n  host: x\n"},
			{"signing_key: ", "\r\n  ", "\r\nnext: 1\r\n"},
			{"signing_key: \"", "\n  ", "\"\nnext: 1\n"},
			{"signing_key: '", "\n  ", "'\nnext: 1\n"},
			{"tls: {signing_key: ", "\n  ", ", host: x}\n"},
			{"tls: {signing_key: \"", "\n  ", "\", host: x}\n"},
			{"signing_key: \"", "\\\n  ", "\"\n"},
			{"- signing_key: ", "\n    ", "\n  host: x\n"},
		} {
			wrapped := wrapKey(key, width, tc.lineBreak)
			out := assertYAMLKeyMasked(t, s, tc.before, wrapped, tc.after)
			for line := range strings.SplitSeq(wrapped, tc.lineBreak) {
				require.NotContains(t, out, line, "%d %q", width, tc.before)
			}
		}
	}
	// YAML in a JSON string in a log line, its line breaks escaped: the value YAML reads of the
	// decoded text, as when the JSON is scanned whole.
	wrapped := wrapKey(key, 64, `\n  `)
	doc := `{"config": "signing_key: ` + wrapped + `\nnext: 1\n"}`
	read := strings.ReplaceAll(wrapped, `\n  `, " ")
	out := s.Text("applied "+doc+" to the pod", &Report{})
	assert.Equal(t, `applied {"config": "signing_key: `+s.placeholder(KindSecretField, read)+`\nnext: 1\n"} to the pod`, out)
	assert.Contains(t, s.Text(doc, &Report{}), s.placeholder(KindSecretField, read), "whole JSON")
}

// Lines of a wrapped key and the text around them that are not one key are kept: an indented
// line after lines that are not (a structure below), text after a 64-character line, two spaces
// between lines, and indented lines under a name that is not of key material.
func TestIndentedWrappedKeyLookalikesAreKept(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	key := rsaKey(t)
	for _, in := range []string{
		"image_key: " + wrapKey(key, 64, "\n  ") + "\n",
		"signing_key: " + key[:64] + "\n  host: " + key[64:200] + "\n",
		"signing_key: " + wrapKey(key, 64, "  "),
		"signing_key: " + wrapKey(key[:900], 64, "\n  "),
	} {
		out := s.Text(in, &Report{})
		assert.NotContains(t, out, KindSecretField, in[:20])
		assert.Contains(t, out, in[strings.IndexAny(in, "\n ")+1+64:], in[:20])
	}
}

// The same wrapped key has one placeholder whichever way the request was recorded: as whole
// JSON (its string decoded), as JSON in a log line (`\n` escapes), as `name="…"` in a log line,
// as JSON in a JSON string in cut JSON (`\\n`), with `\r\n` escapes too, and with the line
// break a key file ends with before the closing quote (also after the key on one line): the
// value hashed is the key's text with real line breaks.
func TestWrappedKeyHasOnePlaceholderInJSONAndText(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	key := rsaKey(t)
	var escaped []string
	for _, width := range []int{64, 76} {
		for _, lb := range []string{`\n`, `\r\n`} {
			escaped = append(escaped, wrapKey(key, width, lb), wrapKey(key, width, lb)+lb)
		}
	}
	escaped = append(escaped, key+`\n`, key+`\r\n`)
	for _, e := range escaped {
		var value string
		require.NoError(t, json.Unmarshal([]byte(`"`+e+`"`), &value))
		want := s.placeholder(KindSecretField, value)
		whole := `{"signing_key": "` + e + `"}`
		assert.Equal(t, `{"signing_key":"`+want+`"}`, s.Text(whole, &Report{}), "whole JSON")
		for _, in := range []string{
			"request " + whole + " sent",
			`level=info signing_key="` + e + `" user=bob`,
			`{"body": "{\"signing_key\": \"` + strings.ReplaceAll(e, `\`, `\\`) + `\"}", "cut`,
		} {
			var r Report
			out := s.Text(in, &r)
			assert.NotContains(t, out, key[64:128], in[:12])
			assert.Contains(t, out, want, "%q %s", e[len(e)-8:], in[:12])
			assert.Equal(t, map[string]int64{KindSecretField: 1}, r.Counts, in[:12])
			assert.Equal(t, out, s.Text(out, &Report{}), "idempotent")
		}
	}
}

// Wrapped key material in Python's implicit concatenation, strings on lines of their own in
// parentheses, is one key: masked with the placeholder of the string Python reads (the lines
// joined with nothing: the key unwrapped, as {"signing_key": "MIIE…"} has it), in double or
// single quotes, in a dict, and in a Python source in a JSON string in a log line (decoded).
// Other calls and other names keep their strings.
func TestKeyInImplicitConcatenationIsOneKey(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	key := rsaKey(t)
	want := s.placeholder(KindSecretField, key)
	assert.Contains(t, s.Text(`{"signing_key": "`+key+`"}`, &Report{}), want)
	for _, width := range []int{64, 76} {
		for _, tc := range []struct{ before, lineBreak, after string }{
			{"SIGNING_KEY = (\n    \"", "\"\n    \"", "\"\n)\nprint(1)\n"},
			{"signing_key = (\n    '", "'\n    '", "'\n)\n"},
			{"config = {\n    \"ssh_key\": (\n        \"", "\"\r\n        \"", "\"\n    ),\n}\n"},
			{"tls.signing_key = (\"", "\"\n    \"", "\")\n"},
		} {
			in := tc.before + wrapKey(key, width, tc.lineBreak) + tc.after
			var r Report
			out := s.Text(in, &r)
			assert.Equal(t, tc.before+want+tc.after, out, "%d %q", width, tc.before)
			assert.Equal(t, map[string]int64{KindSecretField: 1}, r.Counts, tc.before)
			assert.Equal(t, out, s.Text(out, &Report{}), "idempotent")
		}
		code, err := json.Marshal("import os\nSIGNING_KEY = (\n    \"" + wrapKey(key, width, "\"\n    \"") + "\"\n)\n")
		require.NoError(t, err)
		out := s.Text(`tool call {"path": "keys.py", "content": `+string(code)+`} done`, &Report{})
		assert.Contains(t, out, want, "in a JSON string")
		assert.NotContains(t, out, key[width:width+32])
	}
	for _, in := range []string{
		"image_key = (\n    \"" + wrapKey(key, 64, "\"\n    \"") + "\"\n)\n",
		"sign(\n    \"" + wrapKey(key, 64, "\"\n    \"") + "\"\n)\n",
	} {
		assert.Equal(t, in, s.Text(in, &Report{}), in[:12])
	}
}

// Wrapped key material whose lines end in spaces or tabs, or with blank lines among its lines
// (a key pasted from an editor or a terminal), is one key: masked whole, with the placeholder
// of the value as written (its escapes decoded), the one it gets as a JSON value and as an
// attribute; in YAML, that of the value YAML reads (trailing spaces dropped). Text after the
// key stays, also after a blank line.
func TestWrappedKeyWithTrailingSpacesOrBlankLinesIsOneKey(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	key := rsaKey(t)
	for _, width := range []int{64, 76} {
		blankAmong := func(lb string) string {
			return wrapKey(key[:width*5], width, lb) + lb + lb + wrapKey(key[width*5:], width, lb)
		}
		for _, wrapped := range []string{
			wrapKey(key, width, "  \n"),
			wrapKey(key, width, "\n\n"),
			blankAmong("\n"),
			wrapKey(key, width, "\t\r\n \r\n"),
			wrapKey(key, width, ` \n`),
			blankAmong(`\r\n`),
		} {
			var read string
			require.NoError(t, json.Unmarshal([]byte(`"`+strings.NewReplacer("\n", `\n`, "\r", `\r`, "\t", `\t`).Replace(wrapped)+`"`), &read))
			want := s.placeholder(KindSecretField, read)
			for _, in := range []string{
				"signing_key: " + wrapped + "\nnext: 1\n",
				`level=info signing_key="` + wrapped + `" user=bob`,
			} {
				var r Report
				out := s.Text(in, &r)
				assert.Equal(t, in[:strings.Index(in, "MII")]+want+in[strings.Index(in, wrapped)+len(wrapped):], out, "%d %q", width, wrapped[width:width+6])
				assert.Equal(t, map[string]int64{KindSecretField: 1}, r.Counts)
				assert.Equal(t, out, s.Text(out, &Report{}), "idempotent")
			}
			whole, err := json.Marshal(map[string]string{"signing_key": read})
			require.NoError(t, err)
			assert.Contains(t, s.Text(string(whole), &Report{}), want, "whole JSON")
		}
		assertYAMLKeyMasked(t, s, "signing_key: ", wrapKey(key, width, "  \n  "), "\nnext: 1\n")
		assertYAMLKeyMasked(t, s, "tls:\n  signing_key: ", wrapKey(key, width, "\t\n    "), "\n  host: x\n")
	}
	// After a blank line, prose is no line of the key; another name keeps its lines.
	for _, in := range []string{
		"signing_key: " + wrapKey(key[:64*20], 64, "\n") + "\n\nNext we rotate it\n",
		"image_key: " + wrapKey(key, 64, "\n\n"),
	} {
		out := s.Text(in, &Report{})
		assert.Contains(t, out, in[strings.LastIndex(in, "\n\n"):], in[:12])
	}
	// Blank lines are passed once, each line once: 1 MiB of them, between lines of a key.
	for _, in := range []string{
		key[:64] + strings.Repeat(" \n", 1<<19) + key[64:128],
		wrapKey(strings.Repeat(key[:64], 1<<10), 64, "\n \t\n"),
	} {
		quickEnough(t, time.Second, func() { wrappedKeyEnd(in, 0) }, in[:20])
	}
}
