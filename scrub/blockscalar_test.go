package scrub

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// A YAML block scalar under a secret name (`password: |`, `>`, `|-`, `>+`, `|2`) has its value
// on the lines below, indented deeper than the name: those lines are masked, every one, up to
// the first line that is not indented deeper, with the placeholder of the value YAML reads; the
// lines after it are kept.
func TestBlockScalarsUnderSecretNamesAreMasked(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	for _, tc := range []struct{ in, value, read, after string }{
		{"password: |\n  hunter2-long-secret\n", "hunter2-long-secret", "hunter2-long-secret\n", "\n"},
		{"password: |-\n  hunter2-long-secret\nnext: 1\n", "hunter2-long-secret", "hunter2-long-secret", "\nnext: 1\n"},
		{"db:\n  password: >\n    correct horse\n    battery staple\n  host: db.internal\n", "correct horse battery staple", "correct horse battery staple\n", "\n  host: db.internal\n"},
		{"db:\n  password: >+ # folded\n    correct horse\n\n    battery staple\n\n  host: x", "correct horse battery staple", "correct horse\nbattery staple\n\n", "\n\n  host: x"},
		{"- client_secret: |2\r\n    s3cr3t value\r\n- name: x", "s3cr3t value", "s3cr3t value\n", "\r\n- name: x"},
		{"auth:\n  api_key: |\n    9f8e7d6c5b4a\n", "9f8e7d6c5b4a", "9f8e7d6c5b4a\n", "\n"},
		{"private_key: |\n  line one\n  line two\n", "line one line two", "line one\nline two\n", "\n"},
	} {
		var r Report
		out := s.Text(tc.in, &r)
		for _, w := range strings.Fields(tc.value) {
			assert.NotContains(t, out, w, tc.in)
		}
		assert.Contains(t, out, s.placeholder(KindSecretField, tc.read), "the value as YAML reads it: %q", tc.in)
		assert.True(t, strings.HasSuffix(out, tc.after), "the lines after the block are kept: %q", out)
		assert.Equal(t, map[string]int64{KindSecretField: 1}, r.Counts, tc.in)
		assert.Equal(t, out, s.Text(out, &Report{}), "idempotent: %q", tc.in)
	}
	// In cut JSON the block is found once its escapes are decoded, also when its name opens the
	// string (the string's text is a YAML document).
	for _, escaped := range []string{
		`{"content":"config:\n  password: |\n    hunter2-long-secret\n  user: bob`,
		`log {"content": "password: |\n  hunter2-long-secret\nuser: bob\n", "cut`,
		`log {"files": ["- password: >-\n    hunter2-long-secret\n  user: bob\n"], "cut`,
	} {
		out := s.Text(escaped, &Report{})
		assert.NotContains(t, out, "hunter2", escaped)
		rest := escaped[strings.Index(escaped, "hunter2-long-secret")+len("hunter2-long-secret"):]
		assert.True(t, strings.HasSuffix(out, rest), "the lines after the block stay: %s", out)
	}
}

// What is no block scalar under a secret name keeps what it kept: an indicator that is not
// alone on its line, a name that is no secret, a block with no lines below it, `>` in prose.
func TestBlockScalarLookalikesAreKept(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	for _, in := range []string{
		"description: |\n  the password field is required\n",
		"password: >\nnext: 1\n",
		"password: |\n",
		"password: > 8 characters\n  and more\n",
		"max_tokens: |\n  512\n",
	} {
		assert.Equal(t, in, s.Text(in, &Report{}), in)
	}
}

// A secret written as a YAML block scalar has the placeholder it has as a JSON string: the
// value hashed is the block's lines joined as YAML joins them for its style and chomping, so
// the YAML text and the JSON a YAML parser makes of it scrub to the same placeholders.
func TestBlockScalarsHaveTheirJSONPlaceholder(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	for _, in := range []string{
		"password: |\n  hunter2-long-secret\n",
		"password: |\n  hunter2-long-secret",
		"password: |-\n  hunter2-long-secret\nnext: 1\n",
		"password: |+\n  hunter2-long-secret\n\n\nnext: 1\n",
		"password: |\n  line one\n\n  line two\n  # not a comment\n",
		"password: |\n\n  after a blank line\n",
		"password: |2\n    indented by the indicator\n  also\n",
		"db:\n  password: >\n    correct horse\n    battery staple\n  host: db.internal\n",
		"db:\n  password: >+ # folded\n    correct horse\n\n    battery staple\n\n  host: x\n",
		"password: >-\n  folded\n  words\n\n\n  after two blank lines\n",
		"password: >\n  folded\n    deeper line\n  back\n\n    deeper after blank\n  end\n",
		"password: |\n  line one\n      \n  line two\n", // spaces past the indentation: a line of them
		"password: >\n  line one\n      \n  line two\n    \n",
		"- client_secret: |2\r\n    s3cr3t value\r\n- name: x\r\n",
		"private_key: |\n  -----BEGIN OPENSSH PRIVATE KEY-----\n  b3BlbnNzaC1rZXktdjEAAAAABG5vbmU=\n  -----END OPENSSH PRIVATE KEY-----\n",
	} {
		var parsed any
		require.NoError(t, yaml.Unmarshal([]byte(in), &parsed), in)
		asJSON, err := json.Marshal(parsed)
		require.NoError(t, err)
		fromYAML := placeholderPattern.FindAllString(s.Text(in, &Report{}), -1)
		fromJSON := placeholderPattern.FindAllString(s.Text(string(asJSON), &Report{}), -1)
		require.NotEmpty(t, fromYAML, in)
		assert.Equal(t, fromJSON, fromYAML, "%q and %s", in, asJSON)
	}
}

// Key material in a block scalar under a name of key material (no secret name, so the pair is
// not found by the assignment pattern): a wrapped RSA key or the key on one line, literal or
// folded, any chomping, nested, with CRLF line breaks, in JSON in a log line with its escapes;
// every line is masked, with the placeholder of the value YAML reads, the one the JSON a YAML
// parser makes of it gets ({"signing_key": "MIIE…\n"}) and the same value as an attribute
// (assertYAMLKeyMasked). The lines after the block are kept.
func TestKeyMaterialBlockScalarsAreMasked(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	key := rsaKey(t)
	for _, tc := range []struct{ before, lineBreak, after string }{
		{"signing_key: |\n  ", "\n  ", "\nnext: 1\n"},
		{"signing_key: |-\n  ", "\n  ", "\nnext: 1\n"},
		{"tls:\n  ssh_key: >\n    ", "\n    ", "\n  host: x\n"},
		{"- \"signing_key\": |+ # DER, base64\n    ", "\n    ", "\n\n  name: a\n"},
		{"signing_key: |\r\n  ", "\r\n  ", "\r\nnext: 1\r\n"},
		{"signing_key: |\n  ", "", "\nnext: 1\n"}, // one line
	} {
		for _, width := range []int{64, 76} {
			lines := key
			if tc.lineBreak != "" {
				lines = wrapKey(key, width, tc.lineBreak)
			}
			in := tc.before + lines + tc.after
			out := assertYAMLKeyMasked(t, s, tc.before, lines, tc.after)
			assert.NotContains(t, out, key[width:width+32])
			escaped, err := json.Marshal(in)
			require.NoError(t, err)
			for _, inLog := range []string{
				`applied {"config": "# tls.yaml\n` + string(escaped[1:]) + `, "cut`,
				`applied {"config": ` + string(escaped) + `, "cut`, // the name opens the string
			} {
				inLogOut := s.Text(inLog, &Report{})
				assert.Contains(t, inLogOut, placeholderPattern.FindString(out), "in JSON in a log line: %q", inLog[:30])
				assert.NotContains(t, inLogOut, key[width:width+32])
			}
		}
	}
	for _, in := range []string{
		"image_key: |\n  " + wrapKey(key, 64, "\n  ") + "\n",
		"signing_key: |\n  " + wrapKey(key[:900], 64, "\n  ") + "\n",
		"signing_key: |\n  the key is in the vault\n",
		"signing_key: |\nnext: 1\n",
	} {
		assert.Equal(t, in, s.Text(in, &Report{}), in[:20])
	}
}
