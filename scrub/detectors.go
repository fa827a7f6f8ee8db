package scrub

import (
	"encoding/base64"
	"math/big"
	"regexp"
	"strings"
)

// detector finds one kind of secret or personal data in text. group, when set, is the
// submatch to replace (the rest of the match stays, e.g. a URL around its password).
type detector struct {
	kind  string
	re    *regexp.Regexp
	group int
	valid func(string) bool
	// hints: the regexp only runs on text that contains one of these (a cheap prefilter);
	// minDigits: or that holds at least this many digits.
	hints     []string
	minDigits int
}

// mayMatch is the prefilter: false when the detector cannot match v.
func (d *detector) mayMatch(v string, digits int) bool {
	if d.minDigits > 0 {
		return digits >= d.minDigits
	}
	if len(d.hints) == 0 {
		return true
	}
	for _, h := range d.hints {
		if strings.Contains(v, h) {
			return true
		}
	}
	return false
}

func countDigits(v string) int {
	n := 0
	for i := 0; i < len(v); i++ {
		if v[i] >= '0' && v[i] <= '9' {
			n++
		}
	}
	return n
}

// builtins run in this order: longer, more specific shapes first, so that a PEM block or a JWT
// is not partly taken for something else.
var builtins = []detector{
	{kind: "pem_private_key", hints: []string{"PRIVATE KEY"}, re: regexp.MustCompile(`-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----`)},
	{kind: "jwt", hints: []string{"eyJ"}, re: regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{10,}`)},
	{kind: "url_password", hints: []string{"://"}, re: regexp.MustCompile(`\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s:/@]+:([^\s@/]+)@`), group: 1},
	{kind: "bearer_token", hints: []string{"earer", "EARER"}, re: regexp.MustCompile(`(?i)\bbearer\s+([A-Za-z0-9._~+/=-]{16,})`), group: 1},
	{kind: "basic_auth", hints: []string{"asic", "ASIC"}, re: regexp.MustCompile(`(?i)\bbasic\s+([A-Za-z0-9+/]{8,}={0,2})`), group: 1, valid: basicCredentials},
	{kind: "anthropic_api_key", hints: []string{"sk-ant-"}, re: regexp.MustCompile(`\bsk-ant-[A-Za-z0-9_-]{20,}`)},
	{kind: "openai_api_key", hints: []string{"sk-"}, re: regexp.MustCompile(`\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}`)},
	{kind: "google_api_key", hints: []string{"AIza"}, re: regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}`)},
	{kind: "aws_access_key_id", hints: []string{"AKIA", "ASIA", "ABIA", "ACCA"}, re: regexp.MustCompile(`\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b`)},
	{kind: "github_token", hints: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"}, re: regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})`)},
	{kind: "gitlab_token", hints: []string{"glpat-"}, re: regexp.MustCompile(`\bglpat-[A-Za-z0-9_-]{20,}`)},
	{kind: "slack_token", hints: []string{"xox"}, re: regexp.MustCompile(`\bxox[abposr]-[A-Za-z0-9-]{10,}`)},
	{kind: "stripe_secret_key", hints: []string{"_live_", "_test_"}, re: regexp.MustCompile(`\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{20,}`)},
	{kind: "sendgrid_api_key", hints: []string{"SG."}, re: regexp.MustCompile(`\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}`)},
	{kind: "npm_token", hints: []string{"npm_"}, re: regexp.MustCompile(`\bnpm_[A-Za-z0-9]{36}\b`)},
	{kind: "huggingface_token", hints: []string{"hf_"}, re: regexp.MustCompile(`\bhf_[A-Za-z0-9]{34,}\b`)},
	{kind: "email", hints: []string{"@"}, re: regexp.MustCompile(`\b[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b`)},
	{kind: "iban", minDigits: 10, re: regexp.MustCompile(`\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?\b`), valid: ibanChecksum},
	{kind: "payment_card", minDigits: 13, re: regexp.MustCompile(`\b\d(?:[ -]?\d){12,18}\b`), valid: luhn},
	{kind: "phone_number", minDigits: 10, re: regexp.MustCompile(`(?:\+\d{1,3}[ .-]?)?\(?\b\d{3}\)?[ .-]\d{3}[ .-]\d{4}\b|\+\d{10,14}\b`)},
}

// secretKeys are attribute and JSON keys whose values are secrets whatever they look like
// (compared lower-cased, on the last dotted segment, with - and _ removed).
var secretKeys = map[string]bool{
	"password": true, "passwd": true, "pwd": true, "secret": true, "clientsecret": true,
	"apikey": true, "xapikey": true, "accesstoken": true, "refreshtoken": true, "authtoken": true,
	"idtoken": true, "token": true, "authorization": true, "proxyauthorization": true,
	"cookie": true, "setcookie": true, "privatekey": true, "secretkey": true, "accesskey": true,
	"sessiontoken": true, "credentials": true,
}

// KindSecretField is the kind of a value found under a secret key.
const KindSecretField = "secret_field"

// Kinds lists every built-in kind.
func Kinds() []string {
	kinds := []string{KindSecretField}
	for _, d := range builtins {
		kinds = append(kinds, d.kind)
	}
	return kinds
}

var keySeparators = strings.NewReplacer("-", "", "_", "")

func normalizeKey(k string) string {
	if i := strings.LastIndexByte(k, '.'); i >= 0 {
		k = k[i+1:]
	}
	return keySeparators.Replace(strings.ToLower(k))
}

// luhn validates a payment card number.
func luhn(s string) bool {
	var digits []int
	for _, r := range s {
		if r >= '0' && r <= '9' {
			digits = append(digits, int(r-'0'))
		}
	}
	if len(digits) < 13 || len(digits) > 19 || digits[0] < 2 || digits[0] > 6 {
		return false
	}
	sum := 0
	for i := range digits {
		d := digits[len(digits)-1-i]
		if i%2 == 1 {
			if d *= 2; d > 9 {
				d -= 9
			}
		}
		sum += d
	}
	return sum%10 == 0
}

// ibanChecksum validates an IBAN with the ISO 13616 mod-97 check.
func ibanChecksum(s string) bool {
	s = strings.ReplaceAll(s, " ", "")
	if len(s) < 15 || len(s) > 34 {
		return false
	}
	var b strings.Builder
	for _, r := range s[4:] + s[:4] {
		switch {
		case r >= '0' && r <= '9':
			b.WriteRune(r)
		case r >= 'A' && r <= 'Z':
			b.WriteString(big.NewInt(int64(r - 'A' + 10)).String())
		default:
			return false
		}
	}
	n, ok := new(big.Int).SetString(b.String(), 10)
	return ok && new(big.Int).Mod(n, big.NewInt(97)).Int64() == 1
}

// basicCredentials accepts base64 that decodes to user:password.
func basicCredentials(s string) bool {
	b, err := base64.StdEncoding.DecodeString(s)
	return err == nil && strings.Contains(string(b), ":")
}
