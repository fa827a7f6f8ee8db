package scrub

import (
	"regexp"
	"slices"
	"strings"
)

// KindSecretField is the kind of a value found under a secret key name: an attribute or JSON
// key, or a `name=value`, `name: value`, `'name': 'value'` pair inside text (query strings,
// keyword DSNs, .env lines, Python-literal dicts, JSON embedded in prose, NDJSON).
const KindSecretField = "secret_field"

// keyNames decides whether a key names a secret: it contains a secret name and no public one,
// compared lower-cased with separators removed.
type keyNames struct {
	secret, public []string
	exact          map[string]string // user rule keys (normalized last segment) → kind
}

func newKeyNames(secret, public []string) keyNames {
	k := keyNames{exact: map[string]string{}}
	for _, n := range secret {
		k.secret = append(k.secret, normalizeKeyName(n))
	}
	for _, n := range public {
		k.public = append(k.public, normalizeKeyName(n))
	}
	return k
}

// kindOf returns the kind under which the value of key is masked, or "".
func (k keyNames) kindOf(key string) string {
	if strings.Contains(key, "<secret:") {
		key = placeholderPattern.ReplaceAllString(key, "") // a scrubbed key says "secret"
	}
	last := key
	if i := strings.LastIndexByte(last, '.'); i >= 0 {
		last = last[i+1:]
	}
	if kind, ok := k.exact[normalizeKeyName(last)]; ok {
		return kind
	}
	n := normalizeKeyName(key)
	for _, p := range k.public {
		if strings.Contains(n, p) {
			return ""
		}
	}
	for _, s := range k.secret {
		if strings.Contains(n, s) {
			return KindSecretField
		}
	}
	return ""
}

// assignment finds `name<sep>value` pairs in text whose name contains one of the secret
// names; the whole key around the name is then checked by kindOf. The value is a quoted
// string or a run up to whitespace, a quote, ';' or a placeholder, or a YAML block scalar's
// `>` (blockscalar.go). The separator is `=`, `:`, `=>` or `:=`; after a strong name, where no
// such pair is found, also the word "is" or "was" (strongprose.go: `the password is hunter2`).
// A case-insensitive alternation over all of a text is slow, so the first word of each name is
// looked up with strings.Index in a lower-cased copy and the pattern is tried, anchored, only
// there.
type assignment struct {
	anchors []string       // first word of each name, lower case
	at      *regexp.Regexp // the pattern, anchored at a name
	is      *regexp.Regexp // the pattern with "is" or "was", anchored at a strong name
}

func newAssignment(secret []string) *assignment {
	a := &assignment{}
	alts, firstWords := nameAlternatives(secret)
	for _, w := range firstWords {
		if !slices.Contains(a.anchors, w) {
			a.anchors = append(a.anchors, w)
		}
	}
	// The name's closing quote and the value's quotes may be escaped (\"), as in JSON that is
	// itself a JSON string ({\"password\": \"hunter2\"} in a tool result or input.value).
	// An unquoted value does not start with '=': in `name:=<secret:…>` (a value masked after
	// `:=`) the '=' would be taken for the value of `name:`, and masked again.
	value := `(\\"(?:[^"\\]|\\\\\\"|\\[^"])*\\"|` + quotedString + `|[^\s"'<>;=][^\s"'<>;]*|>)`
	a.at = regexp.MustCompile(`^(?i)(?:` + strings.Join(alts, "|") + `)[A-Za-z0-9_.\-]*\\?["']?\s*(?:=>|:=|=|:)\s*` + value)
	// The strong names (wholeline.go); proseValue checks the whole key with strongName.
	strong, _ := nameAlternatives(strongNames)
	a.is = regexp.MustCompile(`^(?i)(?:` + strings.Join(strong, "|") + `)[A-Za-z0-9_.\-]*\s+(?:is|was):?\s+` + value)
	return a
}

// quotedString is a string in double quotes, with backslash escapes, or in single quotes.
const quotedString = `"(?:[^"\\]|\\.)*"|'[^']*'`

// nameAlternatives are the regexp alternatives that find names written with any separator
// (`_`, `-`, `.`, a space or none) between their words, and each name's first word, lower case.
func nameAlternatives(names []string) (alts, firstWords []string) {
	for _, n := range names {
		words := strings.FieldsFunc(strings.ToLower(n), func(r rune) bool { return r == '_' || r == '-' || r == '.' || r == ' ' })
		if len(words) == 0 {
			continue
		}
		var quoted []string
		for _, w := range words {
			quoted = append(quoted, regexp.QuoteMeta(w))
		}
		alts = append(alts, strings.Join(quoted, `[_.\- ]?`))
		firstWords = append(firstWords, words[0])
	}
	return alts, firstWords
}

// pair is one `name<sep>value` found in text: where the name found starts, the value's bounds,
// and whether the separator is the word "is" or "was".
type pair struct {
	name, start, end int
	is               bool
}

// matches returns the pairs found in v.
func (a *assignment) matches(v string) []pair {
	lower := asciiLower(v)
	var starts []int
	for _, w := range a.anchors {
		for from := 0; ; {
			i := strings.Index(lower[from:], w)
			if i < 0 {
				break
			}
			starts = append(starts, from+i)
			from += i + len(w)
		}
	}
	slices.Sort(starts)
	var out []pair
	next := 0
	for _, at := range starts {
		if at < next {
			continue
		}
		m, is := a.at.FindStringSubmatchIndex(v[at:]), false
		if m == nil {
			if m, is = a.is.FindStringSubmatchIndex(v[at:]), true; m == nil {
				continue
			}
		}
		p := pair{name: at, start: at + m[2], end: at + m[3], is: is}
		if structureBelow(v[at:p.start], v[p.start:p.end]) {
			continue // and the pairs below are matched: the next line's name is not skipped
		}
		next = at + m[1]
		if c := pairInWord(v, at, p.start, p.end); c < p.end {
			p.end, next = c, c // secret: x,user=bob: the value is x, and user= is matched by its own name
		}
		out = append(out, p)
		if p.is {
			next = p.start // prose: a pair may start in the word after "is" ("the token is password=…")
		}
	}
	return out
}

// pairInWord returns where the unquoted value v[start:end] of the name at v[name] ends when
// another pair starts in it after a comma (`x,user=bob`, `x,user: bob`), as the value of a
// strong name ends at one after a comma and a space (wholeline.go), or, in a query string (a
// key after '?' or '&'), at the next parameter or the fragment; end when none does. The value
// was cut at the next parameter only once found, and the pairs after it were skipped:
// `&apikey=…&api.key=0` had api.key masked on the second pass, once the value before it was a
// placeholder, and scrubbing was not idempotent.
func pairInWord(v string, name, start, end int) int {
	if c := v[start]; c == '"' || c == '\'' || c == '\\' {
		return end
	}
	for name > 0 && isKeyByte(v[name-1]) {
		name--
	}
	if name > 0 && (v[name-1] == '?' || v[name-1] == '&') {
		if i := strings.IndexAny(v[start:end], "&#"); i >= 0 {
			end = start + i
		}
	}
	for i := start + 1; i < end; i++ {
		if v[i] == ',' && startsPair(v[:end], i+1, ":=") {
			return i
		}
	}
	return end
}

// structureBelow tells whether the value found after a line break is the next line's name
// (`password:`) or a list marker (`-`): the name before opens a YAML mapping or list
// (`credentials:` above `  password: hunter2`) and has no value of its own.
func structureBelow(nameToValue, value string) bool {
	return strings.ContainsAny(nameToValue, "\n\r") && (strings.HasSuffix(value, ":") || value == "-")
}

// asciiLower lower-cases ASCII letters only, so byte offsets stay those of v.
func asciiLower(v string) string {
	b := []byte(v)
	for i, c := range b {
		b[i] = lowerByte(c)
	}
	return string(b)
}

// assignmentSpans returns the value spans of secret assignments in v.
func (s *Scrubber) assignmentSpans(v string) []span {
	if s.assignment == nil {
		return nil
	}
	var out []span
	blockEnd := 0 // the end of the last block scalar or strings in parentheses masked: the pairs inside are part of it
	for _, m := range s.assignment.matches(v) {
		if m.name < blockEnd {
			continue
		}
		keyStart := m.name
		for keyStart > 0 && isKeyByte(v[keyStart-1]) {
			keyStart--
		}
		keyEnd := keyStart
		for keyEnd < len(v) && isKeyByte(v[keyEnd]) {
			keyEnd++
		}
		kind := s.kindOf(v[keyStart:keyEnd])
		if kind == "" {
			continue
		}
		start, end := m.start, m.end
		if m.is {
			if f, ok := proseValue(v, v[keyStart:keyEnd], start, end, kind); ok {
				out = append(out, f) // the password is hunter2 (strongprose.go)
			}
			continue
		}
		if b, ok := blockValue(v, keyStart, start, end, kind); ok {
			out = append(out, b) // password: |, and the lines below it (blockscalar.go)
			blockEnd = b.end
			continue
		}
		if v[start] == '>' || blockIndicator(v[start:end]) {
			continue // an indicator with no block, or `>` in prose: no value
		}
		if v[start] == '{' && cookieJarName(v[keyStart:keyEnd]) {
			out = append(out, s.jarMemberSpans(v, start)...) // cookies={'sessionid': '…'} (cookiejar.go)
			continue
		}
		if v[start] == '(' {
			if elements, ok := parenthesizedStrings(v, start); ok {
				for _, f := range elements {
					if maskableValue(f.value) {
						f.kind = kind
						out = append(out, f) // password = (⏎    "hunter2"⏎), ("a", "b") (pystring.go)
						blockEnd = f.end     // a name in the strings is masked with them: not read again
					}
				}
				continue
			}
		}
		if cookieRecordStarts(v, start) {
			continue // cookie=Cookie[name=sid, value=…]: the record's value is masked as a cookie's (cookiejar.go)
		}
		if v[start] == '[' {
			// A list under a secret name ("password": ["hunter2"]): each element is masked, as
			// the JSON walk masks every string under a secret key.
			out = append(out, listElementSpans(v, start, kind)...)
			continue
		}
		if end-start >= 4 && strings.HasPrefix(v[start:end], `\"`) && strings.HasSuffix(v[start:end], `\"`) {
			start, end = start+2, end-2 // an escaped string: \"hunter2\"
		} else if end-start >= 2 && (v[start] == '"' || v[start] == '\'') {
			start, end = start+1, end-1
		} else {
			// Unquoted (in a query string it ends at the next parameter: pairInWord): a
			// trailing comma or closing bracket belongs to the text around it.
			for end > start && strings.IndexByte(",)}]", v[end-1]) >= 0 {
				end--
			}
			if cookieNameBeforeQuote(v, keyStart, keyEnd, start, end) {
				continue // <SimpleCookie: sessionid='…'>: the value in quotes is the cookie's (cookies.go)
			}
			if h, ok := s.headerSpan(v, keyStart, keyEnd, start, end); ok {
				out = append(out, h) // Cookie: a=1; b=2 and Authorization: Token abc
				continue
			}
			if strongName(v[keyStart:keyEnd]) {
				end = lineValueEnd(v, start, end) // password: correct horse battery staple (wholeline.go)
			}
		}
		if value := v[start:end]; !maskableValue(value) {
			continue
		}
		out = append(out, span{start: start, end: end, kind: kind})
	}
	return out
}

// listElementSpans returns a span for each element of the flat list that opens at v[open]
// ('['), quoted or bare, that maskableValue keeps; none when the list does not close or nests
// (a nested list, object or cookie record has names of its own, which the pairs inside it are
// matched by).
func listElementSpans(v string, open int, kind string) []span {
	var out []span
	for i := open + 1; i < len(v); {
		switch c := v[i]; {
		case c == ']':
			return out
		case c == '[' || c == '{':
			return nil
		case c == ' ' || c == ',' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '"' || c == '\'':
			end := closingQuote(v, i+1, c)
			if end < 0 {
				return nil
			}
			if maskableValue(v[i+1 : end]) {
				out = append(out, span{start: i + 1, end: end, kind: kind})
			}
			i = end + 1
		case cookieRecordStarts(v, i):
			return nil
		default:
			end := i
			for end < len(v) && strings.IndexByte(",] \t\n\r", v[end]) < 0 {
				end++
			}
			if maskableValue(v[i:end]) {
				out = append(out, span{start: i, end: end, kind: kind})
			}
			i = end
		}
	}
	return nil
}

// closingQuote returns the index of the quote q that ends the string starting at v[from], a
// backslash escaping the next byte, or -1.
func closingQuote(v string, from int, q byte) int {
	for i := from; i < len(v); i++ {
		switch v[i] {
		case '\\':
			i++
		case q:
			return i
		}
	}
	return -1
}

func isKeyByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.'
}

// maskableValue: empty values, JSON/Python literals, auth scheme words and nested structures
// carry no secret of their own.
func maskableValue(v string) bool {
	if v == "" || strings.HasPrefix(v, "{") || strings.HasPrefix(v, "[") || strings.HasPrefix(v, "\\\"") {
		return false
	}
	switch strings.ToLower(v) {
	case "null", "none", "nil", "true", "false", "bearer", "basic", "undefined", "***", "redacted":
		return false
	}
	return true
}
