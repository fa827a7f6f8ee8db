package scrub

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A YAML block scalar under a secret name (`password: |`, `>`, `|-`, `>+`, `|2`) has its value
// on the lines below, indented deeper than the name: those lines are masked, every one, up to
// the first line that is not indented deeper; the lines after it are kept.
func TestBlockScalarsUnderSecretNamesAreMasked(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	for _, tc := range []struct{ in, value, after string }{
		{"password: |\n  hunter2-long-secret\n", "hunter2-long-secret", "\n"},
		{"password: |-\n  hunter2-long-secret\nnext: 1\n", "hunter2-long-secret", "\nnext: 1\n"},
		{"db:\n  password: >\n    correct horse\n    battery staple\n  host: db.internal\n", "correct horse\n    battery staple", "\n  host: db.internal\n"},
		{"db:\n  password: >+ # folded\n    correct horse\n\n    battery staple\n\n  host: x", "correct horse\n\n    battery staple", "\n\n  host: x"},
		{"- client_secret: |2\r\n    s3cr3t value\r\n- name: x", "s3cr3t value", "\r\n- name: x"},
		{"auth:\n  api_key: |\n    9f8e7d6c5b4a\n", "9f8e7d6c5b4a", "\n"},
		{"private_key: |\n  line one\n  line two\n", "line one\n  line two", "\n"},
	} {
		var r Report
		out := s.Text(tc.in, &r)
		for _, w := range strings.Fields(tc.value) {
			assert.NotContains(t, out, w, tc.in)
		}
		assert.Contains(t, out, s.placeholder(KindSecretField, tc.value), tc.in)
		assert.True(t, strings.HasSuffix(out, tc.after), "the lines after the block are kept: %q", out)
		assert.Equal(t, map[string]int64{KindSecretField: 1}, r.Counts, tc.in)
		assert.Equal(t, out, s.Text(out, &Report{}), "idempotent: %q", tc.in)
	}
	// In cut JSON the block is found once its escapes are decoded.
	escaped := `{"content":"config:\n  password: |\n    hunter2-long-secret\n  user: bob`
	out := s.Text(escaped, &Report{})
	assert.NotContains(t, out, "hunter2", escaped)
	assert.Contains(t, out, `\n  user: bob`, escaped)
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
