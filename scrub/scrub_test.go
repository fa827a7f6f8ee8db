package scrub

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Planted holds one value of every built-in kind, as it appears in real text. The values are
// made up (the card and IBAN pass their checksums, the keys have the providers' shapes).
var Planted = map[string]string{
	"openai_api_key":    "sk-proj-Xq3vT8pL2mN9rB4wK7yZ1aC5dF0gH6jE",
	"anthropic_api_key": "sk-ant-api03-Zp8Lm2Qw9Rt4Yx7Vb1Nc3Kd6Fg0Hj5",
	"google_api_key":    "AIzaSyD3x9Kq7LmP2wR8tY4uB6nC1vF5gH0jQ2Z",
	"aws_access_key_id": "AKIAIOSFODNN7EXAMPLQ",
	"github_token":      "ghp_1A2b3C4d5E6f7G8h9I0jK1lM2nO3pQ4rS5tU",
	"gitlab_token":      "glpat-Ab3De6Gh9Jk2Mn5Pq8St",
	"slack_token":       "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOp",
	"stripe_secret_key": "sk_live_51HxYzAbCdEfGhIjKlMnOpQr",
	"sendgrid_api_key":  "SG.abcdefghijklmnopqrstuv.abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG",
	"npm_token":         "npm_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
	"huggingface_token": "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",
	"jwt":               "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1c2VyLTQyIn0.c2lnbmF0dXJlLXZhbHVlLTEyMzQ",
	"bearer_token":      "Bearer Zm9vYmFyLXRva2VuLTEyMzQ1Njc4OTA",
	"basic_auth":        "Basic YWxpY2U6czNjcjN0LXBhc3M=",
	"pem_private_key":   "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA0Z3VS5JJcds3xfn\n-----END RSA PRIVATE KEY-----",
	"url_password":      "postgres://app:Sup3rS3cretPw@db.internal:5432/prod",
	"email":             "jane.doe@example-corp.com",
	"phone_number":      "+1 415-555-0132",
	"payment_card":      "4111 1111 1111 1111",
	"iban":              "DE89 3704 0044 0532 0130 00",
}

// secretPart is the byte string that must not survive scrubbing (for some kinds a part of the
// planted text).
func secretPart(kind, v string) string {
	switch kind {
	case "bearer_token":
		return strings.TrimPrefix(v, "Bearer ")
	case "basic_auth":
		return strings.TrimPrefix(v, "Basic ")
	case "url_password":
		return "Sup3rS3cretPw"
	}
	return v
}

func TestEveryBuiltinKindIsFoundAndMaskedDeterministically(t *testing.T) {
	s, err := New(Config{Enabled: true, Key: "test-key"})
	require.NoError(t, err)
	for kind, v := range Planted {
		var r Report
		text := "before " + v + " after"
		out := s.Text(text, &r)
		assert.NotContains(t, out, secretPart(kind, v), kind)
		assert.Contains(t, out, "<secret:"+kind+":", kind)
		assert.Equal(t, map[string]int64{kind: 1}, r.Counts, kind)
		assert.Equal(t, out, s.Text(text, &Report{}), "deterministic")
		assert.Equal(t, out, s.Text(out, &Report{}), "idempotent")
	}
	other, _ := New(Config{Enabled: true, Key: "another-key"})
	assert.NotEqual(t, s.Text(Planted["email"], &Report{}), other.Text(Planted["email"], &Report{}), "the key is part of the hash")
}

func TestJSONIsWalkedWithSecretKeys(t *testing.T) {
	s, _ := New(DefaultConfig())
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
	s, err := New(Config{Enabled: true, Detectors: map[string]string{"email": ActionOff, "payment_card": ActionQuarantine},
		Rules: []RuleConfig{{Kind: "employee_id", Pattern: `\bEMP-\d{6}\b`}, {Kind: "internal_ticket", Keys: []string{"ticket"}, Action: ActionQuarantine}}})
	require.NoError(t, err)
	var r Report
	out := s.Text(`{"ticket":"T-1","text":"card 4111 1111 1111 1111 for EMP-123456, mail jane.doe@example-corp.com"}`, &r)
	assert.Contains(t, out, "jane.doe@example-corp.com", "email is off")
	assert.NotContains(t, out, "EMP-123456")
	assert.NotContains(t, out, "T-1")
	assert.ElementsMatch(t, []string{"payment_card", "internal_ticket"}, r.Quarantine)

	for _, bad := range []Config{
		{Enabled: true, Detectors: map[string]string{"emial": ActionMask}},
		{Enabled: true, Detectors: map[string]string{"email": "drop"}},
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

func TestChecksumsAvoidFalsePositives(t *testing.T) {
	s, _ := New(DefaultConfig())
	for _, ordinary := range []string{
		"order 4111 1111 1111 1112 shipped", // fails Luhn
		"GB00 0000 0000 0000 0000 00",       // fails mod-97
		"trace d4263ddf29d4d69a7c3c210379b94a58 span 8b727ad3b0efe21a",
		"tokens: 1796006715631000000",
		"call get_weather(city, unit) at 14:05",
		"sk-short",
	} {
		var r Report
		assert.Equal(t, ordinary, s.Text(ordinary, &r), ordinary)
		assert.Empty(t, r.Counts, ordinary)
	}
}
