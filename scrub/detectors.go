package scrub

import (
	"encoding/base64"
	"regexp"
	"strings"
)

// detector finds one kind of secret or personal data in text. group, when set, is the
// submatch to replace (the rest of the match stays, e.g. a URL around its password); when that
// group took no part in the match, the first later one that did (one group per alternative).
type detector struct {
	kind  string
	re    *regexp.Regexp
	group int
	// valid, when set, must accept the secret (a checksum, a phone-number parse).
	valid func(string) bool
	// part, when set, is the shape of a whole secret. When valid rejects a match, the parts of
	// it between separators (space, '.', '-') that have this shape and that valid accepts are
	// taken instead, longest first: a greedy match takes in neighbouring digits ("4111 1111
	// 1111 1111 12/27" matches as 18 digits, "order 3 4111…" as 17), and the search goes on
	// after the match, so without this the card inside it would be missed.
	part *regexp.Regexp
	// near, when set, must accept the match at start in v (a context word before it, a key id
	// in the same text).
	near func(v string, start int) bool
	// hints: the regexp only runs on text that contains one of these (a cheap prefilter);
	// minDigits: or that holds at least this many digits.
	hints     []string
	minDigits int
	// credential marks kinds that are looked for across sibling values too (a secret split
	// over two fields); personal data is not, since joined digits pass checksums by chance.
	credential bool
	// personal marks personal-data kinds.
	personal bool
}

// mayMatch is the prefilter: false when the detector cannot match v.
func (d *detector) mayMatch(v string, digits int) bool {
	if d.minDigits > 0 && digits < d.minDigits {
		return false
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

// validParts returns the longest part of v[start:end] that starts and ends at a separator (or
// at start or end), has d's shape and is accepted by valid and near, and the same for the text
// before and after it. With tried, v[start:end] itself is known to fail valid and is not
// checked again (libphonenumber's parse is the dearest check of all).
func (d *detector) validParts(v string, start, end int, tried bool) []span {
	bounds := []int{start}
	for i := start; i < end; i++ {
		if c := v[i]; c == ' ' || c == '.' || c == '-' {
			bounds = append(bounds, i)
		}
	}
	bounds = append(bounds, end)
	best := span{}
	for i, a := range bounds[:len(bounds)-1] {
		if i > 0 {
			a++ // after the separator
		}
		for _, b := range bounds[i+1:] {
			if tried && a == start && b == end {
				continue
			}
			if b-a > best.end-best.start && d.part.MatchString(v[a:b]) && d.valid(v[a:b]) && (d.near == nil || d.near(v, a)) {
				best = span{start: a, end: b, kind: d.kind, personal: d.personal}
			}
		}
	}
	if best.end == 0 {
		return nil
	}
	out := d.validParts(v, start, max(start, best.start-1), false)
	out = append(out, best)
	return append(out, d.validParts(v, min(end, best.end+1), end, false)...)
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

// wordStart is \b before a word, with '_' also taken as a boundary: a value is found after
// "id_" or "_" (id_4111111111111111, _sk-proj-…) as it is after "id-" or " ". The value is the
// group after it. A letter or digit before it still keeps it from matching: "sk-" in
// "task-management-…", the digits of a hex id.
const wordStart = `(?:^|[^0-9A-Za-z])`

// wordEnd is \b after a word, with '_' also taken as a boundary, for the personal-data rules
// (a card number, a phone number in "card_4111111111111111_exp"). Keys end where their
// rule's characters end: '_' and '-' belong to most of them.
const wordEnd = `(?:\b|_)`

// credentialDetectors cover what the gitleaks rule set does not (or only in a narrower shape):
// they run before it, so on an overlap their kind is reported.
var credentialDetectors = []detector{
	// A PEM or PGP private key, with or without its END line (a truncated value still leaks
	// the key material).
	{kind: "pem_private_key", hints: []string{"PRIVATE KEY"}, re: regexp.MustCompile(`-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?:[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|[A-Za-z0-9+/=\s:.,()\\-]*)`)},
	// OpenAI and Anthropic keys of every current shape (gitleaks asks for the legacy
	// T3BlbkFJ marker and a fixed length).
	// They start after anything but a letter or a digit (wordStart): \b took the '_' of
	// "_sk-proj-…" or "id_whsec_…" for a letter.
	{kind: "anthropic_api_key", hints: []string{"sk-ant-"}, re: regexp.MustCompile(wordStart + `(sk-ant-[A-Za-z0-9_-]{20,})`), group: 1},
	{kind: "openai_api_key", hints: []string{"sk-"}, re: regexp.MustCompile(wordStart + `(sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,})`), group: 1},
	{kind: "stripe_webhook_secret", hints: []string{"whsec_"}, re: regexp.MustCompile(wordStart + `(whsec_[A-Za-z0-9+/=]{20,})`), group: 1},
	// AWS secret access keys: 40 characters of base64 alphabet, with AWS or a secret named
	// shortly before (a bare 40-character string is too common: git object ids). The key may
	// be followed by up to four of '/', '+', '=' (a path's slash, padding, a '+' joining it to
	// the next word): base64 characters, so the run is longer than 40 and could be a longer
	// base64 value; it is then taken only with stronger evidence (awsSecretNear). One
	// expression for both, so a text is searched once.
	{kind: "aws_secret_access_key", hints: []string{"aws", "AWS", "Aws", "secret", "Secret", "SECRET", "AKIA", "ASIA"}, re: regexp.MustCompile(`(?:^|[^A-Za-z0-9/+=])([A-Za-z0-9/+]{40})[/+=]{0,4}(?:$|[^A-Za-z0-9/+=])`), group: 1, valid: mixedBase64, near: awsSecretNear},
	{kind: "azure_storage_account_key", hints: []string{"ccountKey", "ccountkey", "CCOUNTKEY"}, re: regexp.MustCompile(`(?i)\bAccountKey=([A-Za-z0-9+/]{20,}={0,2})`), group: 1},
	{kind: "azure_sas_signature", hints: []string{"sig="}, re: regexp.MustCompile(`[?&;]sig=([A-Za-z0-9%+/=]{16,})`), group: 1},
	// Query parameters that carry credentials under a short name (the key-name rules take
	// api_key=, token=, password= …).
	{kind: "url_query_secret", hints: []string{"key=", "signature=", "code="}, re: regexp.MustCompile(`[?&](?:key|signature|code)=([^&#\s"'<>]{8,})`), group: 1},
	{kind: "url_password", hints: []string{"://"}, re: regexp.MustCompile(`\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s:/@]+:([^\s@/]+)@`), group: 1, near: urlPasswordNear},
	// The scheme word starts after anything but a letter or a digit (wordStart): \b took the
	// '_' of "auth_Bearer …" or "header_Basic …" for a letter.
	{kind: "bearer_token", hints: []string{"earer", "EARER"}, re: regexp.MustCompile(`(?i)` + wordStart + `bearer\s+([A-Za-z0-9._~+/=-]{16,})`), group: 1},
	{kind: "basic_auth", hints: []string{"asic", "ASIC"}, re: regexp.MustCompile(`(?i)` + wordStart + `basic\s+([A-Za-z0-9+/]{8,}={0,2})`), group: 1, valid: basicCredentials},
}

func init() {
	for i := range credentialDetectors {
		credentialDetectors[i].credential = true
	}
}

// mixedBase64 rejects hex (git ids, hashes) and single-case strings: an AWS secret access key
// mixes upper case, lower case and digits.
func mixedBase64(s string) bool {
	var upper, lower, digit bool
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= 'A' && c <= 'Z':
			upper = true
		case c >= 'a' && c <= 'z':
			lower = true
		case c >= '0' && c <= '9':
			digit = true
		}
	}
	return upper && lower && digit
}

// urlPasswordNear: the user of the URL whose password starts at v[start] is not the "<secret"
// of a placeholder, whose ':' is no separator (scheme://<secret:email:…>0@ once the first pass
// masked an address in scheme://a@b.co0@), and the password does not start with a placeholder
// (scheme://u:<secret:url_password:…>0@, the text after a password masked up to its '@'): the
// second pass took the placeholder and the text after it for a password, and scrubbing was not
// idempotent.
func urlPasswordNear(v string, start int) bool {
	return !strings.HasSuffix(v[:start-1], "<secret") && !strings.HasPrefix(v[start:], "<secret:")
}

// awsSecretNear: the 100 bytes before the key name AWS or a secret (placeholders, which say
// "secret", do not count). A key followed by '/', '+' or '=' needs more: an AWS access key id
// in the same text (the secret's other half: AKIA… for a user's key, ASIA… for a session's),
// or both AWS and a secret named before it.
func awsSecretNear(v string, start int) bool {
	b := awsContext(v, start)
	aws, secret := strings.Contains(b, "aws"), strings.Contains(b, "secret")
	if end := start + 40; end < len(v) && strings.IndexByte("/+=", v[end]) >= 0 {
		return aws && secret || awsKeyID.MatchString(v)
	}
	return aws || secret
}

// awsKeyID is an access key id as gitleaks' aws-access-token rule has it.
var awsKeyID = regexp.MustCompile(`(?:^|[^A-Za-z0-9])(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}(?:$|[^A-Za-z0-9])`)

// awsContext is the 100 bytes before start, lower-cased, without placeholders.
func awsContext(v string, start int) string {
	before := v[max(0, start-100):start]
	return strings.ToLower(placeholderPattern.ReplaceAllString(before, ""))
}

// basicCredentials accepts base64 that decodes to user:password.
func basicCredentials(s string) bool {
	b, err := base64.StdEncoding.DecodeString(s)
	return err == nil && strings.Contains(string(b), ":")
}
