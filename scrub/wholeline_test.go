package scrub

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

const passphrase = "correct horse battery staple"

// A passphrase under a strong name is masked whole in text where the pair opens its line or
// a connection string's field: YAML, .env, a form pasted into a prompt, cut JSON whose escapes
// are decoded. It gets the placeholder the same value gets as a JSON value or an attribute.
func TestStrongNamesTakeTheRestOfTheirLine(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	whole := s.Text(`{"password": "`+passphrase+`"}`, &Report{})
	want := whole[len(`{"password":"`) : len(whole)-2]
	require.True(t, strings.HasPrefix(want, "<secret:secret_field:"), whole)
	for _, in := range []string{
		"password: " + passphrase,
		"passphrase = " + passphrase,
		"db:\n  password: " + passphrase + "\n  host: db.internal\n",
		"DB_PASSWORD=" + passphrase + "\nDEBUG=1",
		"export SSH_PASSPHRASE=" + passphrase,
		"  - client_secret: " + passphrase + "  \n",
		"Username: bob\r\nPassword: " + passphrase + "\r\nThanks",
		"private_key: " + passphrase + ",",
		"Server=db;User Id=app;Password=" + passphrase + ";Encrypt=true",
		`{"role":"user","content":"here:\npassword: ` + passphrase + `\nthanks`, // cut JSON
	} {
		var r Report
		out := s.Text(in, &r)
		for _, w := range strings.Fields(passphrase) {
			assert.NotContains(t, out, w, in)
		}
		assert.Contains(t, out, want, in)
		assert.Equal(t, map[string]int64{KindSecretField: 1}, r.Counts, in)
		assert.Equal(t, out, s.Text(out, &Report{}), "idempotent: %q", in)
	}
}

// The value under a strong name ends where another pair starts after a comma or a semicolon
// (`, user: bob`, `; name=x`), or a `name=value` pair after a space (logfmt, keyword DSNs): the
// passphrase is masked, the next pair kept. A comma that starts no pair is part of the
// passphrase.
func TestStrongNameValuesEndAtTheNextPair(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	for _, tc := range []struct{ in, value, keep string }{
		{"secret: " + passphrase + ", user: bob", passphrase, ", user: bob"},
		{"secret: x y, user: bob", "x y", ", user: bob"},
		{"password=" + passphrase + ", host=db.internal", passphrase, ", host=db.internal"},
		{"password: " + passphrase + "; name=bob", passphrase, "; name=bob"},
		{"password: correct horse, battery staple", "correct horse, battery staple", ""},
		{"host=db password=" + passphrase + " dbname=app", passphrase, " dbname=app"},
		{"DB_PASSWORD=pw DEBUG=1", "pw", " DEBUG=1"},
		{"level=info secret=x y msg=started", "x y", " msg=started"},
		{"password: correct horse Note: battery", "correct horse Note: battery", ""},
		{"password: correct, horse, battery", "correct, horse, battery", ""},
		{"secret: x,user=bob", "x", ",user=bob"},
		{"password=" + passphrase + ",host: db", passphrase, ",host: db"},
		{"api_key=abc123,model=gpt-4", "abc123", ",model=gpt-4"},
	} {
		var r Report
		out := s.Text(tc.in, &r)
		assert.Contains(t, out, s.placeholder(KindSecretField, tc.value)+tc.keep, tc.in)
		assert.Equal(t, map[string]int64{KindSecretField: 1}, r.Counts, tc.in)
	}
}

// A pair that starts after a comma inside the first word of a value ends it there, as one after
// a comma and a space does, and is matched by its own name.
func TestAPairAfterACommaInTheFirstWordIsMatchedByItsName(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	var r Report
	out := s.Text("api_key=abc123,password=hunter2,user=bob", &r)
	assert.Equal(t, "api_key="+s.placeholder(KindSecretField, "abc123")+",password="+s.placeholder(KindSecretField, "hunter2")+",user=bob", out)
	assert.Equal(t, map[string]int64{KindSecretField: 2}, r.Counts)
}

// A full stop that ends the line after a strong name's value ends a sentence, and the words
// before it are the value when there are few enough of them for a passphrase
// (maxSentenceWords): "my password: correct horse battery staple." masks the passphrase, and
// "the password: see the vault." masks "see the vault" (a false positive, which masked "see"
// before). A longer sentence keeps all but its first word, as before.
func TestAFullStopEndsAPassphrase(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	for _, tc := range []struct{ in, value, keep string }{
		{"my password: " + passphrase + ".", passphrase, "."},
		{"password: " + passphrase + ".  \nnext line", passphrase, ".  \nnext line"},
		{"Password: " + passphrase + ".\r\nThanks", passphrase, ".\r\nThanks"},
		{"the password: see the vault.", "see the vault", "."},
		{"secret: correct horse battery staple xylophone lemon.", "correct horse battery staple xylophone lemon", "."},
		{"Forgot your password: click the link below to reset it.", "click", " the link below to reset it."},
		{"password: correct horse...", "correct", " horse..."},
		{"password: e.g. " + passphrase, "e.g. " + passphrase, ""},
	} {
		var r Report
		out := s.Text(tc.in, &r)
		assert.True(t, strings.HasSuffix(out, s.placeholder(KindSecretField, tc.value)+tc.keep), "%q → %q", tc.in, out)
		assert.Equal(t, map[string]int64{KindSecretField: 1}, r.Counts, tc.in)
		assert.Equal(t, out, s.Text(out, &Report{}), "idempotent: %q", tc.in)
	}
}

// Inside a line of prose, a strong name's `name: value` pair takes the rest of the line under
// the rules of a pair that opens its line (no quotes, brackets, sentence end or label end);
// `<strong name> is <value>` masks a value shaped like a credential (a letter and a digit or a
// symbol, 6 bytes or more) or quoted, and keeps ordinary words.
func TestStrongNamesInProse(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	for _, tc := range []struct{ in, value string }{
		{"my password: " + passphrase, passphrase},
		{"ok so the db password: " + passphrase + ", user: bob", passphrase},
		{"the password is hunter2 okay", "hunter2"},
		{"The Password is hunter2.", "hunter2"},
		{"db password was: s3cr3t-Value", "s3cr3t-Value"},
		{"my passphrase was 'correct horse battery staple' then", passphrase},
		{"the client_secret is Zk2Wq9Lm3Xr7 for prod", "Zk2Wq9Lm3Xr7"},
		{"the wifi password is P@ss-word, then", "P@ss-word"},
		{"the password is 12345678", "12345678"},
	} {
		var r Report
		out := s.Text(tc.in, &r)
		for _, w := range strings.Fields(tc.value) {
			assert.NotContains(t, out, strings.Trim(w, "'"), tc.in)
		}
		assert.Contains(t, out, s.placeholder(KindSecretField, tc.value), tc.in)
		assert.Equal(t, map[string]int64{KindSecretField: 1}, r.Counts, tc.in)
		assert.Equal(t, out, s.Text(out, &Report{}), "idempotent: %q", tc.in)
	}
	for _, in := range []string{
		"the password is required",
		"The password is incorrect, try again.",
		"the password is too short: 12 characters at least",
		"The secret is to keep it simple.",
		"the token is abc123def", // token is no strong name
		"the password is 12 characters long",
		"the password is now-expired",
		"password is `null`",
	} {
		assert.Equal(t, in, s.Text(in, &Report{}), in)
	}
}

// What the widened value must not take: a sentence after a name, names that are no strong name
// (token counts, policies), code whose value is a call or a string, lines longer than a
// passphrase, values cut by quotes, escapes or placeholders. These keep what they kept before:
// the first word after the name is still masked.
func TestStrongNamesKeepProseAndCode(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	for _, tc := range []struct{ in, keep string }{
		{"Forgot your password: click the link below to reset it.", " the link below to reset it."},
		{"Password: click the link below to reset it.", " the link below to reset it."},
		{"Reset password: Settings", ""}, // no strong name at a line start: as before
		{"password_policy: at least 12 characters", " least 12 characters"},
		{"token: the next word of the reply", " next word of the reply"},
		{"max_tokens: 512 per call", "max_tokens: 512 per call"},
		{`password = input("Enter your password: ")`, `"Enter your password: ")`},
		{"secret := os.Getenv(\"APP_SECRET\") // from the environment", "// from the environment"},
		{"password: hunter2 <secret:email:0123456789ab> later", " <secret:email:0123456789ab> later"},
		{"password: first " + strings.Repeat("word ", 60), strings.Repeat("word ", 59)},
		{"Which password: the old one?", " old one?"},
		{"Notes:\nThe password field: required when sign-up is on", " required when sign-up is on"},
	} {
		out := s.Text(tc.in, &Report{})
		assert.Contains(t, out, tc.keep, tc.in)
	}
}

// Attributes and JSON values under a secret name were already masked whole, spaces or not, a
// PEM private key of any length too; a PEM key in text is the pem_private_key rule's.
func TestSecretNamesMaskAnyValueInAttributesAndJSON(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	body := strings.Repeat("MIIEowIBAAKCAQEA0Zk2Wq9Lm3Xr7Tb1Vc5Nd8Fg0Hj4Kp6Rs", 8) // 384 bytes
	pem := "-----BEGIN RSA PRIVATE KEY-----\n" + body + "\n-----END RSA PRIVATE KEY-----"
	td := ptrace.NewTraces()
	attrs := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty().Attributes()
	for _, k := range []string{"password", "passphrase", "client_secret"} {
		attrs.PutStr(k, passphrase)
	}
	attrs.PutStr("private_key", pem)
	attrs.PutStr("tls.private_key", body)
	s.Traces(td, &Report{})
	b, err := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
	require.NoError(t, err)
	assert.NotContains(t, string(b), "horse")
	assert.NotContains(t, string(b), body[:40])
	for _, in := range []string{
		`{"passphrase": "` + passphrase + `", "private_key": "` + strings.ReplaceAll(pem, "\n", `\n`) + `"}`,
		"private_key: " + pem,
		"key file:\n" + pem + "\n",
	} {
		out := s.Text(in, &Report{})
		assert.NotContains(t, out, "horse", in)
		assert.NotContains(t, out, body[:40], in)
	}
}

// FuzzStrongNameLines: a passphrase on a line of its own under a strong name never survives,
// whatever text is around that line, and scrubbing stays idempotent.
// Run: go test -run '^$' -fuzz FuzzStrongNameLines -fuzztime 30s ./scrub/
func FuzzStrongNameLines(f *testing.F) {
	f.Add("db:", "  host: x", "password: ")
	f.Add(`{"content":"`, `"}`, "DB_PASSWORD=")
	f.Add("Server=x;", "", "  - client_secret = ")
	s := newScrubber(f, Config{Enabled: true, Key: "fuzz"})
	f.Fuzz(func(t *testing.T, before, after, name string) {
		if !strings.Contains(name, ": ") && !strings.Contains(name, "=") {
			name = "password: "
		}
		in := before + "\n" + name + passphrase + "\n" + after
		out := s.Text(in, &Report{})
		if twice := s.Text(out, &Report{}); twice != out {
			t.Fatalf("not idempotent:\n in: %q\n 1st: %q\n 2nd: %q", in, out, twice)
		}
		if strongName(strings.TrimRight(strings.TrimLeft(name, " \t-"), ":= ")) && isPlainName(name) && strings.Contains(out, "battery staple") {
			t.Fatalf("passphrase survived: %q → %q", in, out)
		}
	})
}

// isPlainName: name is "  - key: " or "key=" with key made of key bytes, so the pair opens the
// line the fuzz target writes, and the strong name is written as one word (the name=value rule
// looks for password, not p.asswd).
func isPlainName(name string) bool {
	key := strings.TrimLeft(name, " \t-")
	i := strings.IndexAny(key, ":=")
	if i <= 0 || strings.Trim(key[i:], ":= ") != "" {
		return false
	}
	for j := 0; j < i; j++ {
		if !isKeyByte(key[j]) {
			return false
		}
	}
	lower := strings.ToLower(key[:i])
	for _, w := range []string{"password", "passwd", "passphrase", "secret", "private"} {
		if strings.Contains(lower, w) {
			return true
		}
	}
	return false
}
