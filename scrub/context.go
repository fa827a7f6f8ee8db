package scrub

import (
	"encoding/json"
	"sort"
	"strings"
	"unsafe"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// A string that is JSON as a whole, and a map of attributes, are walked value by value, so a
// credential rule that needs the name in front of the value does not see it there: gitleaks'
// generic_api_key on {"client_key": "8dyf…"} or {"access_key": …}, the AWS secret with "aws"
// or "secret" in the 100 bytes before. After the walk, the credential rules therefore also run
// over the token-like string values (as split.go takes them: no spaces, at most 256 bytes, not
// yet masked; longer ones under a name that needs it: contextValue), each on a line of its own
// after its name (and, in JSON, the names of the objects around it: aws.client_key = "8dyf…"),
// and each secret they find is masked wherever it occurs in the values, with the placeholder
// the same text in prose gets. Personal data is not looked for this way: the digits of
// neighbouring numbers pass a checksum by chance.

// contextSecret is a credential found with its name.
type contextSecret struct{ kind, value string }

// contextSecrets returns the credentials the credential rules find in the token-like string
// values of v (a decoded JSON value), each written on a line with its names, longest first.
func (s *Scrubber) contextSecrets(v any) []contextSecret {
	c := contextLines{clean: &s.splitClean}
	c.walk(v)
	return s.lineSecrets(c.lines)
}

// contextMap is contextSecrets and maskSecrets for the string attributes of m: an attribute
// client_key is written "client_key" = … as well.
func (s *Scrubber) contextMap(m pcommon.Map, r *Report) {
	c := contextLines{clean: &s.splitClean}
	for k, v := range m.All() {
		if v.Type() == pcommon.ValueTypeStr {
			c.add(k, v.Str())
		}
	}
	secrets := s.lineSecrets(c.lines)
	if len(secrets) == 0 {
		return
	}
	for _, v := range m.All() {
		if v.Type() == pcommon.ValueTypeStr {
			if out := s.maskSecrets(v.Str(), secrets, r).(string); out != v.Str() {
				v.SetStr(out)
			}
		}
	}
}

// lineSecrets runs the credential rules over each line (contextLines leaves out those found
// clean before), longest secret first. Lines repeat (the same name and value in every record of
// a list): each is scanned once.
func (s *Scrubber) lineSecrets(lines []string) []contextSecret {
	var out []contextSecret
	var seen map[string]bool
	for _, line := range lines {
		if seen[line] {
			continue
		}
		if seen == nil {
			seen = map[string]bool{}
		}
		seen[line] = true
		var found []span
		digits := countDigits(line)
		for k := range s.detectors {
			if d := &s.detectors[k]; d.credential {
				found = append(found, s.detectorSpans(d, line, digits)...)
			}
		}
		found = append(found, s.gitleaksSpans(line)...)
		if len(found) == 0 {
			s.splitClean.add(line)
		}
		for _, f := range found {
			c := contextSecret{kind: f.kind, value: line[f.start:f.end]}
			if !strings.Contains(c.value, `"`) && !containsSecret(out, c.value) {
				out = append(out, c) // a finding with a quote is not the value's alone
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return len(out[i].value) > len(out[j].value) })
	return out
}

// contextValue tells whether the string value v under name is written on a line with its name:
// a token-like value (tokenLike), or a longer one without whitespace under a name that holds
// one of the keywords of the rules that need a name (a 320-byte key under access_key is found
// in text written `access_key = "…"`, and was kept as an attribute or in JSON). Up to
// maxNamedValue bytes, as in text; the name bounds the cost: url.full and a tool's long ids are
// not written out again.
func contextValue(name, v string) bool {
	if tokenLike(v) {
		return true
	}
	if len(v) <= maxSplitPart || len(v) > maxNamedValue || strings.ContainsAny(v, " \t\n<") {
		return false
	}
	return contextName(name)
}

// maxNamedValue bounds a value without whitespace that is read with its name although it is
// longer than opaqueRun, the length from which a base64 run that is no text is taken for binary
// data: a DER private key in base64 without its PEM lines (3.2 KiB for RSA-4096, 6.3 KiB for
// RSA-8192), a long token. A longer value under such a name is data (an image under image_key),
// and scanning it would cost as much as scanning text of its length for each value. Under a
// secret name a value is masked whole, whatever its length, without being scanned, and so is
// a longer one under a name of key material (longKeyMaterial).
const maxNamedValue = 8 << 10

// keyMaterialEndings are the endings, normalized, of names whose value is key material, however
// long: signing_key, tls.private_key, ENCRYPTION_KEY, ssh_key (not image_key, cache_key).
var keyMaterialEndings = []string{"signingkey", "privatekey", "privkey", "secretkey", "encryptionkey",
	"decryptionkey", "masterkey", "hmackey", "clientkey", "sslkey", "tlskey", "sshkey"}

// longKeyMaterial tells whether value, under name, is masked whole as key material: base64 of
// opaqueRun bytes or more that decodes to no text (binary: a DER key), under a name that ends
// in one of keyMaterialEndings. Up to maxNamedValue the credential rules read such a value with
// its name too, but whether they find it depends on its bytes (a 1.6 KiB key under signing_key
// was found or not); it is masked without being scanned, so the work is one pass over it,
// however long: a 1 MiB key under signing_key.
func (s *Scrubber) longKeyMaterial(name, value string) bool {
	if s.assignment == nil || len(value) < opaqueRun || !nameEndsIn(name, keyMaterialEndings) {
		return false
	}
	if value = strings.TrimRight(value, "\r\n"); len(value) < opaqueRun {
		return false // a key file read whole ends with a line break
	}
	if strings.ContainsAny(value, "\n ") { // wrapped in lines, or folded by YAML (wrappedkey.go)
		end, _, ok := wrappedKeyEnd(value, 0)
		return ok && end == len(value)
	}
	run := strings.TrimRight(value, "=")
	if len(value)-len(run) > 2 || !allBase64(run) {
		return false
	}
	_, text := decodeBase64Text(value)
	return !text
}

// allBase64 tells whether every byte of v is a base64 character (isBase64Byte).
func allBase64(v string) bool {
	for i := 0; i < len(v); i++ {
		if !isBase64Byte(v[i]) {
			return false
		}
	}
	return true
}

// keyMaterialList masks, in a list v (of lists) under name, the elements longKeyMaterial takes
// under that name: {"signing_key": ["MIIJKQ…"]} holds the key as {"signing_key": "MIIJKQ…"}
// does. The other elements are left to the walk.
func (s *Scrubber) keyMaterialList(name string, v any, r *Report) {
	list, ok := v.([]any)
	if !ok || s.assignment == nil || !nameEndsIn(name, keyMaterialEndings) {
		return
	}
	for i, e := range list {
		if str, ok := e.(string); ok && s.longKeyMaterial(name, str) {
			list[i] = s.secretValue(KindSecretField, str, r)
		} else {
			s.keyMaterialList(name, e, r)
		}
	}
}

// keyMaterialSlice is keyMaterialList for an attribute value.
func (s *Scrubber) keyMaterialSlice(name string, v pcommon.Value, r *Report) {
	if v.Type() != pcommon.ValueTypeSlice || s.assignment == nil || !nameEndsIn(name, keyMaterialEndings) {
		return
	}
	for i := 0; i < v.Slice().Len(); i++ {
		e := v.Slice().At(i)
		if e.Type() == pcommon.ValueTypeStr && s.longKeyMaterial(name, e.Str()) {
			e.SetStr(s.secretValue(KindSecretField, e.Str(), r))
		} else {
			s.keyMaterialSlice(name, e, r)
		}
	}
}

// contextName tells whether name holds one of contextNameKeywords.
func contextName(name string) bool {
	name = strings.ToLower(name)
	for _, k := range contextNameKeywords {
		if strings.Contains(name, k) {
			return true
		}
	}
	return false
}

// nameBefore returns the name written in front of the value at v[start] (`name: `, `name=`,
// `"name": "`, `name => '`, `\"name\":\"`, `"name": ["`, `name = (⏎    "`), or "".
func nameBefore(v string, start int) string {
	i := start
	skipQuote := func() {
		if i > 0 && (v[i-1] == '"' || v[i-1] == '\'') {
			i--
			if i > 0 && v[i-1] == '\\' {
				i--
			}
		}
	}
	skipSpaces := func() {
		for i > 0 && (v[i-1] == ' ' || v[i-1] == '\t') {
			i--
		}
	}
	skipQuote()
	skipSpaces()
	if i > 0 && v[i-1] == '[' { // the first element of a list: "signing_key": ["MIIJKQ…"]
		i--
		skipSpaces()
	} else if p := strings.TrimRight(v[:i], " \t\r\n"); strings.HasSuffix(p, "(") {
		i = len(p) - 1 // the first string in parentheses, on the next line in Python
		skipSpaces()
	}
	switch {
	case strings.HasSuffix(v[:i], "=>"), strings.HasSuffix(v[:i], ":="):
		i -= 2
	case i > 0 && (v[i-1] == '=' || v[i-1] == ':'):
		i--
	default:
		return ""
	}
	skipSpaces()
	skipQuote()
	end := i
	for i > 0 && end-i < maxNameBefore && isKeyByte(v[i-1]) {
		i--
	}
	return v[i:end]
}

// maxNameBefore bounds the name nameBefore reads.
const maxNameBefore = 64

// contextNameKeywords are the keywords of gitleaks' generic_api_key and the AWS secret's
// context words, lower case.
var contextNameKeywords = []string{"access", "api", "auth", "key", "credential", "creds", "passwd", "password", "secret", "token", "aws"}

// contextLines gathers the lines `name = "value"` that lineSecrets scans, for the string values
// that contextValue takes. The names (a JSON value's path: aws.client_key) and the lines are
// built in a buffer reused along the walk and on the stack, and a line the credential rules found nothing in
// before (splitClean, which lineSecrets fills) is left out here: before, every key of every
// JSON object and every such value cost a string, most of them for lines already known clean.
type contextLines struct {
	clean *cleanCache
	path  []byte
	lines []string
}

func (c *contextLines) add(name, value string) {
	if !contextValue(name, value) {
		return
	}
	if len(name)+len(value)+len(` = ""`) > maxCachedLen { // no cache holds it
		c.lines = append(c.lines, name+` = "`+value+`"`)
		return
	}
	var buf [maxCachedLen]byte // on the stack: only a line not known clean is copied out
	line := append(append(append(append(buf[:0], name...), ` = "`...), value...), '"')
	if c.clean.has(unsafe.String(unsafe.SliceData(line), len(line))) {
		return
	}
	c.lines = append(c.lines, string(line))
}

// walk adds a line for each string value in v (a decoded JSON value) under its path.
func (c *contextLines) walk(v any) {
	switch t := v.(type) {
	case string:
		if len(c.path) > 0 {
			c.add(unsafe.String(unsafe.SliceData(c.path), len(c.path)), t) // add keeps no reference to it
		}
	case []any:
		for _, e := range t {
			c.walk(e)
		}
	case map[string]any:
		n := len(c.path)
		for k, e := range t {
			if n > 0 {
				c.path = append(c.path, '.')
			}
			c.path = append(c.path, k...)
			c.walk(e)
			c.path = c.path[:n]
		}
	}
}

func containsSecret(list []contextSecret, v string) bool {
	for _, c := range list {
		if c.value == v {
			return true
		}
	}
	return false
}

// maskSecrets replaces each of secrets wherever it occurs in the string values of v (a decoded
// JSON value) and numbers equal to one, and returns v.
func (s *Scrubber) maskSecrets(v any, secrets []contextSecret, r *Report) any {
	switch t := v.(type) {
	case string:
		for _, c := range secrets {
			if n := strings.Count(t, c.value); n > 0 {
				t = strings.ReplaceAll(t, c.value, s.placeholder(c.kind, c.value))
				for range n {
					r.found(c.kind, s.actions[c.kind])
				}
			}
		}
		return t
	case json.Number:
		if out := s.maskSecrets(string(t), secrets, r).(string); out != string(t) {
			return out
		}
		return t
	case []any:
		for i := range t {
			t[i] = s.maskSecrets(t[i], secrets, r)
		}
		return t
	case map[string]any:
		for k, val := range t {
			t[k] = s.maskSecrets(val, secrets, r)
		}
		return t
	}
	return v
}
