package scrub

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A card number is found when the greedy match takes in digits beside it (an expiry date, a
// quantity, a field before it): the match fails the checksum, and the card inside it is taken.
func TestCardNumberBesideOtherDigits(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	for _, tc := range []struct{ in, keep string }{
		{"card 4111 1111 1111 1111 12/27 cvc", "12/27 cvc"},
		{"card 5555-5555-5555-4444 09 28", "09 28"},
		{"order 3 4111111111111111", "order 3 "},
		{`{"000000000"4111111111111111 0@0.AA`, `{"000000000"`}, // found by FuzzText
	} {
		var r Report
		out := s.Text(tc.in, &r)
		assert.NotContains(t, out, "1111 1111", tc.in)
		assert.NotContains(t, out, "111111111111", tc.in)
		assert.NotContains(t, out, "5555-4444", tc.in)
		assert.Contains(t, out, tc.keep, tc.in)
		assert.Equal(t, int64(1), r.Counts["payment_card"], tc.in)
		assert.Equal(t, out, s.Text(out, &Report{}), "idempotent: %q", tc.in)
	}
	for _, in := range []string{
		"0000 0000 0000 0000 1",     // no card starts with 0
		"ref 4111 1111 1111 1112 3", // no part passes the checksum
	} {
		assert.Equal(t, in, s.Text(in, &Report{}), in)
	}
}

// An IPv6 address ends with a hex group or "::": one colon after it (prose, a log line, a port
// without brackets) was taken into the match, which then failed the parse and was lost.
func TestIPv6AddressBeforeAColon(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	for _, in := range []string{"from 2001:db8:85a3::8a2e:370:7334: refused", "peer=2001:db8::1:", "2001:db8:85a3:0:0:8a2e:370:7334:443",
		"fe80::1ff:fe23:4567:890a: up"} {
		out := s.Text(in, &Report{})
		assert.NotContains(t, out, "2001:db8", in)
		assert.NotContains(t, out, "fe80::1ff", in)
		assert.Contains(t, out, "<secret:ip_address:", in)
	}
	for _, in := range []string{"::1: loopback", `"::ffff:" + ipv4`, "at 12:30:45: done", "std::vector<int>::iterator"} {
		assert.Equal(t, in, s.Text(in, &Report{}), "not an address that points at a host")
	}
}

// An auth scheme word after '_' (a header folded into an identifier or a log key: auth_Bearer,
// header_Basic) starts the credential as it does after a space or a quote; a letter or digit
// before it still does not.
func TestAuthSchemesAfterAnUnderscore(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	for _, tc := range []struct{ in, secret, kind string }{
		{"auth_Bearer Zk2Wq9Lm3Xr7Tb1Vc5Nd8Fg0Hj4Kp6Rs", "Zk2Wq9Lm3Xr7Tb1Vc5Nd8Fg0Hj4Kp6Rs", "bearer_token"},
		{"auth_Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "dozjgNryP4J3jVmNHl0w5N", "bearer_token"},
		{"header_Basic dXNlcjpwYXNz", "dXNlcjpwYXNz", "basic_auth"},
		{"x_BASIC dXNlcjpwYXNzd29yZA== sent", "dXNlcjpwYXNzd29yZA", "basic_auth"},
	} {
		var r Report
		out := s.Text(tc.in, &r)
		assert.NotContains(t, out, tc.secret, tc.in)
		assert.Contains(t, out, "<secret:"+tc.kind+":", tc.in)
		assert.Equal(t, out, s.Text(out, &Report{}), "idempotent: %q", tc.in)
	}
	for _, in := range []string{
		"if use_bearer and not is_basic: retry_bearer_handshake()",
		"use_basic auth for the demo", // "auth" is no base64 of user:password
		"header_Basic dGVzdA==",       // "test": no user:password
		"the_basic_idea is simple enough",
		"xBearer Zk2Wq9Lm3Xr7Tb1Vc5Nd8Fg0Hj4Kp6Rs", // a letter touching the scheme word
		"is_bearer required",
	} {
		assert.Equal(t, in, s.Text(in, &Report{}), in)
	}
}

// An AWS secret access key followed by '/', '+' or '=' (base64 characters, so the run is
// longer than 40) is found when an access key id is in the same text or both "aws" and
// "secret" come before it; a longer base64 value or a hex id with one of them is kept.
func TestAWSSecretBeforeBase64Punctuation(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	const key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzK9q3Tn2Lm"
	for _, in := range []string{
		"aws_secret " + key + "+",
		"AKIAIOSFODNN7QWERTYZ " + key + "/",
		"creds: ASIAIOSFODNN7QWERTYZ:" + key + "== (session)",
		"the AWS secret access key is " + key + "/ (rotate it)",
	} {
		var r Report
		out := s.Text(in, &r)
		assert.NotContains(t, out, key, in)
		assert.Contains(t, out, "<secret:aws_secret_access_key:", in)
		assert.Equal(t, s.Text("aws secret "+key, &Report{})[len("aws secret "):], s.placeholder("aws_secret_access_key", key), "the same placeholder as the key alone")
		assert.Equal(t, out, s.Text(out, &Report{}), "idempotent: %q", in)
	}
	for _, in := range []string{
		"https://aws.amazon.com/blogs/" + key + "/",                                 // aws, no secret, no key id
		"secret sauce " + key + "=",                                                 // a secret, no aws
		"aws secret rotation ZGVmYXVsdC1jb25maWctdmFsdWUtZm9yLXRoZS1zZXJ2aWNl/more", // a longer run
		"aws secret manager commit 3f9a1c0b2d4e5f60718293a4b5c6d7e8f9012345/",       // hex
	} {
		assert.Equal(t, in, s.Text(in, &Report{}), in)
	}
}

// A credential one of Reprise's own rules finds is masked wherever it occurs in the text, as a
// gitleaks finding is: also where a letter or a digit touches it, which the rule alone does not
// take (FuzzText: a planted key survived after "0").
func TestACredentialFoundIsMaskedWhereverItOccurs(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	key := "sk-proj-Xq3vT8pL2mN9rB4wK7yZ1aC5dF0gH6jE"
	in := "the commit ref0" + key + " leaked the key " + key + " to the log"
	var r Report
	out := s.Text(in, &r)
	assert.NotContains(t, out, key)
	assert.Equal(t, 2, strings.Count(out, s.placeholder("openai_api_key", key)), out)
	assert.Equal(t, out, s.Text(out, &Report{}), "idempotent")
	// Alone, touched by a letter, it is still not taken (see TestWiderBoundariesKeepWordsAndIDs).
	assert.Equal(t, "ref0"+key[:20], s.Text("ref0"+key[:20], &Report{}))
}
