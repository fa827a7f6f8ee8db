package scrub

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/scrub/scrubtest"
)

// testConfig keeps the key file in a test directory.
func testConfig(t testing.TB) Config {
	return Config{Enabled: true, KeyFile: filepath.Join(t.TempDir(), "scrub.key")}
}

func newScrubber(t testing.TB, cfg Config) *Scrubber {
	s, err := New(cfg)
	require.NoError(t, err)
	return s
}

// assertMaskedOnce checks that scrubbing in masks secret once, as a secret_field with the
// placeholder of secret itself, and that the result scrubs to itself.
func assertMaskedOnce(t *testing.T, s *Scrubber, in, secret string) {
	t.Helper()
	var r Report
	out := s.Text(in, &r)
	assert.NotContains(t, out, secret, in)
	assert.Contains(t, out, s.placeholder(KindSecretField, secret), in)
	assert.Equal(t, map[string]int64{KindSecretField: 1}, r.Counts, in)
	assert.Equal(t, out, s.Text(out, &Report{}), "idempotent: %q", in)
}

func TestEveryKindIsFoundAndMaskedDeterministically(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "test-key"})
	for _, p := range scrubtest.Planted {
		var r Report
		text := "before " + p.Text + " after"
		out := s.Text(text, &r)
		assert.NotContains(t, out, p.Must(), p.Text)
		assert.Contains(t, out, "<secret:"+p.Kind+":", p.Text)
		assert.Equal(t, map[string]int64{p.Kind: 1}, r.Counts, p.Text)
		assert.Equal(t, out, s.Text(text, &Report{}), "deterministic")
		assert.Equal(t, out, s.Text(out, &Report{}), "idempotent")
	}
	other := newScrubber(t, Config{Enabled: true, Key: "another-key"})
	assert.NotEqual(t, s.Text(scrubtest.Planted[0].Text, &Report{}), other.Text(scrubtest.Planted[0].Text, &Report{}), "the key is part of the hash")
}

func TestSecretKeyNamesAreCaseInsensitiveAndCommonSpellings(t *testing.T) {
	s := newScrubber(t, testConfig(t))
	for _, key := range []string{"password", "db_password", "DB_PASSWORD", "dbPassword", "passwd", "passphrase", "client_secret",
		"aws_secret_access_key", "connection_string", "ConnectionString", "sentry.dsn", "OPENAI_API_KEY", "x-api-key", "apiKey",
		"private_key", "credentials", "refresh_token", "Authorization", "Cookie"} {
		var r Report
		out := s.Text(`{"`+key+`":"v4lue-with-no-known-prefix"}`, &r)
		assert.NotContains(t, out, "v4lue-with-no-known-prefix", key)
		assert.Equal(t, map[string]int64{KindSecretField: 1}, r.Counts, key)
	}
	for _, key := range []string{"max_tokens", "gen_ai.usage.input_tokens", "llm.token_count.prompt", "tokenizer", "token_type", "city"} {
		var r Report
		in := `{"` + key + `":42}`
		assert.Equal(t, in, s.Text(in, &r), key)
	}
	list := s.Text(`{"api_keys":["first-plain-value","second-plain-value"]}`, &Report{})
	assert.NotContains(t, list, "plain-value", "arrays under a secret key are masked element by element")
	flag := `{"password_reset_enabled":true,"api_key":null}`
	assert.Equal(t, flag, s.Text(flag, &Report{}), "booleans and nulls hold no secret")
}

func TestShapesTheWalkerMustSee(t *testing.T) {
	s := newScrubber(t, testConfig(t))
	b64 := base64.StdEncoding.EncodeToString([]byte(`{"user":"bob","password":"b64-hidden-pw"}`))
	for name, tc := range map[string]struct{ in, secret string }{
		"json in prose":       {`the tool said {"db_password": "pr0se-pw", "ok": true} and stopped`, "pr0se-pw"},
		"ndjson":              {"{\"a\":1}\n{\"passphrase\":\"nd-json-pw\"}\n", "nd-json-pw"},
		"python dict":         {`args={'user': 'bob', 'DB_PASSWORD': 'py-dict-pw', 'retries': 3}`, "py-dict-pw"},
		".env line":           {"OPENAI_API_KEY=plainvalue123\nDEBUG=1", "plainvalue123"},
		"yaml":                {"db:\n  password: yaml-pw-value\n", "yaml-pw-value"},
		"base64 json":         {"payload " + b64, "b64-hidden-pw"},
		"email as json key":   {`{"jane.doe@example-corp.com":{"role":"admin"}}`, "jane.doe@"},
		"card as json number": {`{"card":4111111111111111,"qty":2}`, "4111111111111111"},
		"split credential":    {`{"key_part_1":"sk-proj-Xq3vT8pL2mN","key_part_2":"9rB4wK7yZ1aC5dF0gH6jE"}`, "9rB4wK7yZ1aC5dF0gH6jE"},
	} {
		out := s.Text(tc.in, &Report{})
		assert.NotContains(t, out, tc.secret, name)
		if name == "base64 json" {
			assert.NotContains(t, out, b64, name)
		}
	}
}

// A private key on one line is a long base64 run that is not text: it is still key material.
func TestOneLinePrivateKeyIsNotTakenForBinaryData(t *testing.T) {
	s := newScrubber(t, testConfig(t))
	body := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0x30, 0x82, 0x04, 0xa4, 0x02, 0x01, 0x00, 0xff}, 200))
	out := s.Text("key: -----BEGIN PRIVATE KEY-----"+body, &Report{})
	assert.NotContains(t, out, body[:100])
}

func TestJSONKeepsWhatIsNotSecret(t *testing.T) {
	s := newScrubber(t, testConfig(t))
	var r Report
	out := s.Text(`{"user":"bob","password":"hunter2","nested":{"api_key":"abc123","note":"mail jane.doe@example-corp.com"},"n":12345678901234567890}`, &r)
	assert.NotContains(t, out, "hunter2")
	assert.NotContains(t, out, "abc123")
	assert.NotContains(t, out, "jane.doe@")
	assert.Contains(t, out, `"n":12345678901234567890`, "numbers are kept as written")
	assert.Contains(t, out, `"user":"bob"`)
	assert.Equal(t, map[string]int64{KindSecretField: 2, "email": 1}, r.Counts)
	unchanged := `{"b": 1, "a": "plain text"}`
	assert.Equal(t, unchanged, s.Text(unchanged, &Report{}), "untouched JSON keeps its bytes")
}

func TestActionsAndRules(t *testing.T) {
	cfg := testConfig(t)
	cfg.Detectors = map[string]string{"email": ActionOff, "payment_card": ActionQuarantine, "github_pat": ActionOff}
	cfg.Rules = []RuleConfig{{Kind: "employee_id", Pattern: `\bEMP-\d{6}\b`}, {Kind: "internal_ticket", Keys: []string{"ticket"}, Action: ActionQuarantine}}
	s := newScrubber(t, cfg)
	var r Report
	out := s.Text(`{"ticket":"T-1","text":"card 4111 1111 1111 1111 for EMP-123456, mail jane.doe@example-corp.com, ci ghp_1A2b3C4d5E6f7G8h9I0jK1lM2nO3pQ4rS5tU"}`, &r)
	assert.Contains(t, out, "jane.doe@example-corp.com", "email is off")
	assert.Contains(t, out, "ghp_1A2b3C4d5E6f7G8h9I0jK1lM2nO3pQ4rS5tU", "a gitleaks rule can be turned off")
	assert.NotContains(t, out, "EMP-123456")
	assert.NotContains(t, out, "T-1")
	assert.ElementsMatch(t, []string{"payment_card", "internal_ticket"}, r.Quarantine)

	for _, bad := range []Config{
		{Enabled: true, Detectors: map[string]string{"emial": ActionMask}},
		{Enabled: true, Detectors: map[string]string{"email": "drop"}},
		{Enabled: true, PhoneRegions: []string{"XX"}},
		{Enabled: true, SecretKeyNames: []string{"_"}},
		{Enabled: true, Rules: []RuleConfig{{Kind: "x", Pattern: "("}}},
		{Enabled: true, Rules: []RuleConfig{{Kind: "Bad Kind", Keys: []string{"k"}}}},
		{Enabled: true, Rules: []RuleConfig{{Kind: "empty"}}},
	} {
		_, err := New(bad)
		assert.Error(t, err)
	}
	disabled, err := New(Config{})
	require.NoError(t, err)
	assert.Equal(t, "a@b.co", disabled.Text("a@b.co", &Report{}))
}

// A public key name is a fragment every key is searched for: an empty one (or one of
// separators only, which are ignored) is in every key, so no key would be secret any more.
func TestEmptyPublicKeyNameIsRefused(t *testing.T) {
	cfg := Config{Enabled: true, Key: "k", PublicKeyNames: []string{"tokens", "-"}}
	assert.EqualError(t, cfg.Validate(), `scrub.public_key_names[1]: empty name ("-" without its separators), which every key contains: no key would be secret`)
	cfg.PublicKeyNames = []string{"tokens"}
	require.NoError(t, cfg.Validate())
}

func TestChecksumsAvoidFalsePositives(t *testing.T) {
	s := newScrubber(t, testConfig(t))
	for _, ordinary := range []string{
		"order 4111 1111 1111 1112 shipped", // fails Luhn
		"GB00 0000 0000 0000 0000 00",       // fails mod-97
		"trace d4263ddf29d4d69a7c3c210379b94a58 span 8b727ad3b0efe21a",
		"tokens: 1796006715631000000",
		"call get_weather(city, unit) at 14:05:00 on 2026-11-30",
		"listen on 127.0.0.1:4317 or [::1]:4318",
		"version 1.28.0, commit 5264374a9f1c2b3d4e5f60718293a4b5c6d7e8f9",
		"sk-short",
		"SSN-like 000-12-3456 and 666-12-3456",
		"call 555-0100", // too short for any region
	} {
		var r Report
		assert.Equal(t, ordinary, s.Text(ordinary, &r), ordinary)
		assert.Empty(t, r.Counts, ordinary)
	}
}

// One Scrubber serves every pipeline goroutine (run with -race).
func TestConcurrentUse(t *testing.T) {
	s := newScrubber(t, testConfig(t))
	want := s.Text(scrubtest.Planted[0].Text+" "+scrubtest.Planted[5].Text, &Report{})
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 20; j++ {
				assert.Equal(t, want, s.Text(scrubtest.Planted[0].Text+" "+scrubtest.Planted[5].Text, &Report{}))
				s.Text(`{"password":"x1","model":"gpt-4o-mini"}`, &Report{})
			}
		}()
	}
	wg.Wait()
}

func TestAttributesOfEveryType(t *testing.T) {
	s := newScrubber(t, testConfig(t))
	m := pcommon.NewMap()
	m.PutInt("order.card", 4111111111111111)
	m.PutInt("retries", 3)
	m.PutDouble("latency", 0.029032467)
	m.PutEmptyBytes("blob").FromRaw([]byte("mail jane.doe@example-corp.com"))
	m.PutStr("jane.doe@example-corp.com", "owner")
	m.PutEmptySlice("cc").AppendEmpty().SetStr("john@example-corp.com")
	m.PutStr("DB_PASSWORD", "no-known-shape")
	m.PutBool("has_password", true)
	var r Report
	s.Map(m, &r)
	all := fmt.Sprint(m.AsRaw())
	for _, leaked := range []string{"4111111111111111", "jane.doe", "john@", "no-known-shape"} {
		assert.NotContains(t, all, leaked)
	}
	card, _ := m.Get("order.card")
	assert.Equal(t, pcommon.ValueTypeStr, card.Type(), "a card number in an int attribute becomes a placeholder string")
	retries, _ := m.Get("retries")
	assert.Equal(t, int64(3), retries.Int())
	latency, _ := m.Get("latency")
	assert.Equal(t, 0.029032467, latency.Double())
	flag, _ := m.Get("has_password")
	assert.True(t, flag.Bool())
	assert.Equal(t, map[string]int64{"payment_card": 1, "email": 3, KindSecretField: 1}, r.Counts)

	before := m.AsRaw()
	s.Map(m, &Report{})
	assert.Equal(t, before, m.AsRaw(), "idempotent")
}

// Key names are compared folded (strings.ToLower turns the Kelvin sign into k and İ into i), so
// a name: value pair in text spelled with them is a secret assignment too, and the offsets of
// what is masked stay those of the text: what is around it is kept byte for byte.
func TestSecretPairsSpelledWithFoldingRunes(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	for _, in := range []string{
		"api_" + kelvin + "ey: hunter2xyz",
		"my_to" + kelvin + "en = hunter2xyz",
		"AP" + dotI + "_KEY: hunter2xyz",
	} {
		var r Report
		out := s.Text(in, &r)
		assert.NotContains(t, out, "hunter2xyz", in)
		assert.Equal(t, int64(1), r.Counts["secret_field"], in)
		name := in[:strings.IndexAny(in, ":=")]
		assert.True(t, strings.HasPrefix(out, name), "%q keeps its name as written: %q", in, out)
	}
	// Offsets after a folded rune are those of the text: the e-mail address after it is masked
	// whole, and the words around it are kept.
	var r Report
	out := s.Text(kelvin+dotI+" write to alice@example.com now", &r)
	assert.Regexp(t, `^`+kelvin+dotI+` write to <secret:email:[0-9a-f]+> now$`, out)
}

// Every free-form string field of the telemetry is scanned, the schema URLs and a log record's
// severity text included: log records and traces the processor passes on carry them to exporters.
func TestSchemaURLsAndSeverityTextsAreScrubbed(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	const leak = "user alice@example.com key sk-proj-Pl4ntedAbcdefghijklmnopqrstuv"
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.SetSchemaUrl("https://schema.example/" + leak)
	ss := rs.ScopeSpans().AppendEmpty()
	ss.SetSchemaUrl("https://schema.example/" + leak)
	ss.Spans().AppendEmpty().SetName("ok")
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.SetSchemaUrl("https://schema.example/" + leak)
	sl := rl.ScopeLogs().AppendEmpty()
	sl.SetSchemaUrl("https://schema.example/" + leak)
	sl.LogRecords().AppendEmpty().SetSeverityText(leak)
	var r Report
	s.Traces(td, &r)
	s.Logs(ld, &r)
	for _, got := range []string{rs.SchemaUrl(), ss.SchemaUrl(), rl.SchemaUrl(), sl.SchemaUrl(), sl.LogRecords().At(0).SeverityText()} {
		assert.NotContains(t, got, "alice@example.com")
		assert.NotContains(t, got, "sk-proj-Pl4nted")
	}
	assert.Equal(t, map[string]int64{"email": 5, "openai_api_key": 5}, r.Counts)
}

// E-mail addresses are found whole in any script, and with the @ percent-encoded as a URL's
// query writes it: an ASCII-only shape missed josé@example.com and left "mü" of
// müller@example.de before the placeholder.
func TestEmailAddressesInAnyScript(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	for in, kept := range map[string][2]string{
		"josé@example.com":                         {"", ""},
		"contact alice@exämple.com now":            {"contact ", " now"},
		"müller@example.de":                        {"", ""},
		"https://x.io/u?email=alice%40example.com": {"https://x.io/u?email=", ""},
		"write to Ådne.Øst@firma.no, or call":      {"write to ", ", or call"},
		"(bob@example.org)":                        {"(", ")"},
	} {
		var r Report
		out := s.Text(in, &r)
		assert.Regexp(t, `^`+regexp.QuoteMeta(kept[0])+`<secret:email:[0-9a-f]+>`+regexp.QuoteMeta(kept[1])+`$`, out, in)
		assert.Equal(t, map[string]int64{"email": 1}, r.Counts, in)
	}
	for _, in := range []string{"foo@bar", "user@@example.com", "@opentelemetry/instrumentation-openai", "50%40 off"} {
		var r Report
		assert.Equal(t, in, s.Text(in, &r), "not an address")
	}
}

// A list under a secret name in text (JSON embedded in prose, or base64 of it) has each element
// masked, as the JSON walk masks every string under a secret key; the list's shape is kept.
func TestListsUnderSecretNamesInText(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	for in, want := range map[string]string{
		`config: {"password": ["hunter2", "swordfish"]}`:                      `^config: \{"password": \["<secret:secret_field:[0-9a-f]+>", "<secret:secret_field:[0-9a-f]+>"\]\}$`,
		`api_key=[s3cr3t, null, true]`:                                        `^api_key=\[<secret:secret_field:[0-9a-f]+>, null, true\]$`,
		base64.StdEncoding.EncodeToString([]byte(`{"password":["hunter2"]}`)): `^<secret:secret_field:[0-9a-f]+>$`,
	} {
		var r Report
		out := s.Text(in, &r)
		assert.Regexp(t, want, out, in)
		assert.NotContains(t, out, "hunter2")
	}
	// A list that does not close, or nests, is left to the pairs inside it.
	for _, in := range []string{`password: [1, 2`, `password: [["a"]]`} {
		assert.Equal(t, in, s.Text(in, &Report{}))
	}
}

// A YAML mapping or list under a secret name (`credentials:`, `secrets:`) has no value of its
// own: the next line's name or list marker is not its value, and the pairs below it are found,
// as the JSON walk walks a map under a secret key.
func TestMappingsUnderSecretNamesInYAML(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	for _, tc := range []struct{ in, keep string }{
		{"credentials:\n  password: hunter2\n  user: bob", "credentials:\n  password: <secret:"},
		{"secrets:\n  db_password: |\n    hunter2\n", "secrets:\n  db_password: |\n    <secret:"},
		{"token:\npassword: hunter2", "token:\npassword: <secret:"},
		{"api_key:\r\n  secret: hunter2", "api_key:\r\n  secret: <secret:"},
		{"credentials:\n  - password: hunter2", "credentials:\n  - password: <secret:"},
	} {
		var r Report
		out := s.Text(tc.in, &r)
		assert.NotContains(t, out, "hunter2", tc.in)
		assert.Contains(t, out, tc.keep, tc.in)
		assert.Equal(t, map[string]int64{KindSecretField: 1}, r.Counts, tc.in)
	}
	// A value on the next line is still the name's value (a plain YAML scalar, pretty-printed JSON).
	out := s.Text("password:\n  hunter2\nuser: bob", &Report{})
	assert.NotContains(t, out, "hunter2")
	assert.Contains(t, out, "\nuser: bob")
}

// JSON that is itself inside a JSON string ({\"password\": \"hunter2\"}, as a tool result or
// input.value holds it) is read as name: value pairs with escaped quotes; a value with an
// escaped quote of its own is masked whole.
func TestSecretPairsInEscapedJSON(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	for in, want := range map[string]string{
		`Result: {\"password\": \"hunter2\"}`:     `^Result: \{\\"password\\": \\"<secret:secret_field:[0-9a-f]+>\\"\}$`,
		`x {\"api_key\":\"abc\\\"def\"} y`:        `^x \{\\"api_key\\":\\"<secret:secret_field:[0-9a-f]+>\\"\} y$`,
		`password=abc\def`:                        `^password=<secret:secret_field:[0-9a-f]+>$`,
		`{\"token\": \"t0k3n\", \"n\": \"kept\"}`: `^\{\\"token\\": \\"<secret:secret_field:[0-9a-f]+>\\", \\"n\\": \\"kept\\"\}$`,
	} {
		var r Report
		out := s.Text(in, &r)
		assert.Regexp(t, want, out, in)
		assert.Equal(t, out, s.Text(out, &Report{}), "idempotent")
	}
}

// Base64 at the end of a URL's path is decoded and scanned: '/' being a base64 character, the
// run began with the path before it and decoded as nothing. Only the encoded value is masked.
func TestBase64AfterAURLPath(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	enc := base64.StdEncoding.EncodeToString([]byte(`{"email":"alice@example.com"}`))
	for _, prefix := range []string{"https://app.example.com/r/", "/v1/share-", "token_"} {
		var r Report
		out := s.Text(prefix+enc, &r)
		assert.Regexp(t, `^`+regexp.QuoteMeta(prefix)+`<secret:email:[0-9a-f]+>$`, out)
	}
	for _, in := range []string{"see /docs/getting-started/installation-guide-for-everyone", "/a/" + strings.Repeat("b", 30)} {
		assert.Equal(t, in, s.Text(in, &Report{}))
	}
}
