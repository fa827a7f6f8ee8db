package scrub

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/reprise-dev/reprise/scrub/scrubtest"
)

// A secret in prose is followed by punctuation that gitleaks' rules, written for code, do not
// take as its end.
func TestSecretsBeforeProsePunctuation(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	for _, p := range scrubtest.Planted {
		if p.Kind == "pem_private_key" {
			continue // it takes in what follows
		}
		for _, around := range [][2]string{{"", ","}, {"", "."}, {"(", ")"}, {"(", ")."}, {"[", "]"}, {"{", "}"},
			{"<", ">"}, {"", "!"}, {"", "?"}, {"", ":"}, {"“", "”"}, {"« ", " »"}, {"«", "»"}, {"**", "**"}, {"|", "|"}, {"", "..."}} {
			in := "the key is " + around[0] + p.Text + around[1] + " thanks"
			out := s.Text(in, &Report{})
			assert.NotContains(t, out, p.Must(), in)
			assert.Equal(t, out, s.Text(out, &Report{}), "idempotent")
		}
	}
}

func TestProseViewBlanksOnlyWhatEndsASecretLikeToken(t *testing.T) {
	for in, want := range map[string]string{
		"key AIzaSyD3x9Kq7LmP2wR8tY4uB6nC1vF5gH0jQ2Z, then": "key AIzaSyD3x9Kq7LmP2wR8tY4uB6nC1vF5gH0jQ2Z  then",
		"(eyJhbGciOi.eyJzdWIiOi.c2lnbmF0dX).":               "(eyJhbGciOi.eyJzdWIiOi.c2lnbmF0dX  ",
		"“sk_live_51HxYzAbCdEfGhIjKlMnOpQr”":                "   sk_live_51HxYzAbCdEfGhIjKlMnOpQr   ",
	} {
		got, ok := proseView(in)
		assert.True(t, ok, in)
		assert.Equal(t, want, got)
		assert.Len(t, got, len(in), "the same offsets")
	}
	for _, in := range []string{"Use the information, the conditions.", "v1.2.3, ok", "AIzaSyD3x9Kq7LmP2wR8tY4uB6nC1vF5gH0jQ2Z.html"} {
		_, ok := proseView(in)
		assert.False(t, ok, in)
	}
}

// A password of letters only after "password is", "password was" or "passphrase is" is masked
// when it does not describe the password; the words that do are kept.
func TestAPasswordOfLettersAfterIsIsMasked(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	for _, tc := range []struct{ in, secret string }{
		{"the password is swordfish", "swordfish"},
		{"The password was Swordfish.", "Swordfish"},
		{"my passphrase is bluebottle, keep it safe", "bluebottle"},
		{"the db_password is: kangaroo", "kangaroo"},
		{"das Passwort? the password is contraseña", "contraseña"},
		{"the client_secret is AbCdEfGhIjKlMnOpEd", "AbCdEfGhIjKlMnOpEd"},
		// Typographic quotes, bold and an ellipsis are not part of it: the placeholder is the
		// one it has as a JSON value.
		{"the password is “swordfish”.", "swordfish"},
		{"the password is ‘swordfish’, keep it", "swordfish"},
		{"le mot de passe? the password is «swordfish».", "swordfish"},
		{"the password is **swordfish**.", "swordfish"},
		{"the password is swordfish…", "swordfish"},
		{"the password is “hunter22”.", "hunter22"},
	} {
		assertMaskedOnce(t, s, tc.in, tc.secret)
	}
	for _, in := range []string{
		"the password is wrong",
		"the password is required",
		"the password is not set",
		"the password is empty",
		"the password is incorrect",
		"the password is too short",
		"the password is invalid, try again",
		"the password was changed yesterday",
		"the password is stored in the vault",
		"the password is missing from the request",
		"the password is randomly generated",
		"the password is different for each user",
		"the password is something only you know",
		"the password is always hashed",
		"The password is REQUIRED.",
		"the passphrase is optional",
		"the password is case-sensitive",
		"the token is expired-session-marker",
	} {
		assert.Equal(t, in, s.Text(in, &Report{}), in)
	}
}

// A Python triple-quoted string under a secret name is masked whole, over its lines, with the
// quotes kept; a cut one up to the end of the text. Scrubbing the output again changes nothing.
func TestTripleQuotedSecretIsMaskedWhole(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	for _, tc := range []struct{ in, value, rest string }{
		{"client_key = \"\"\"Zk2Wq9Lm3Xr7\nTb1Vc5Nd8Fg0\"\"\"\nuser = 'bob'", "Zk2Wq9Lm3Xr7\nTb1Vc5Nd8Fg0", "\"\"\"\nuser = 'bob'"},
		{"password = '''correct horse\nbattery staple'''", "correct horse\nbattery staple", "'''"},
		{`db_password='''hunter2 and more'''`, "hunter2 and more", "'''"},
		{"password = \"\"\"cut in the midd", "cut in the midd", ""},
	} {
		var r Report
		out := s.Text(tc.in, &r)
		want := tc.in[:strings.Index(tc.in, tc.value)] + s.placeholder(KindSecretField, tc.value) + tc.rest
		assert.Equal(t, want, out, tc.in)
		assert.Equal(t, map[string]int64{KindSecretField: 1}, r.Counts, tc.in)
		assert.Equal(t, out, s.Text(out, &Report{}), "idempotent")
	}
	plain := `note = """not a secret name"""`
	assert.Equal(t, plain, s.Text(plain, &Report{}))
}

// String prefixes and many triple-quoted strings: each string is read once.
func TestTripleQuotedPrefixesAndCost(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	out := s.Text(`signing_key = r"""abc def ghi"""`, &Report{})
	assert.Equal(t, `signing_key = r"""`+s.placeholder(KindSecretField, "abc def ghi")+`"""`, out)
	key := strings.Repeat("Zk2Wq9Lm3Xr7Tb1Vc5Nd8Fg0Hj4Kp6Rs", 64) // 2 KiB, one line
	in := "client_key = \"\"\"" + key + "\nMORE\"\"\"\nnote = \"\"\"doc\"\"\"\npassword = '''hunter2 x'''"
	out = s.Text(in, &Report{})
	assert.Equal(t, "client_key = \"\"\""+s.placeholder(KindSecretField, key+"\nMORE")+"\"\"\"\nnote = \"\"\"doc\"\"\"\npassword = '''"+s.placeholder(KindSecretField, "hunter2 x")+"'''", out)
	many := strings.Repeat(`x = """doc""" `, 20000) + `password = """` + strings.Repeat("a", 32<<10)
	quickEnough(t, 2*time.Second, func() { out = s.Text(many, &Report{}) })
	assert.False(t, strings.Contains(out, strings.Repeat("a", 100)), "a cut string is masked to the end")
	assert.True(t, strings.HasPrefix(out, `x = """doc""" `), "docstrings stay")
}
