package scrub

import "strings"

// Prose names a secret without a separator: "the password is hunter2", "my passphrase was
// 'correct horse battery staple'". After a strong name (wholeline.go) and the word "is" or
// "was", the value is a quoted string on one line, or else the next word when it is at least
// minProseSecret bytes and shaped like a credential (a digit or a symbol in it) or a word of
// letters only that does not describe (describing.go): "the password is swordfish" is masked,
// "the password is required", "is incorrect", "is randomly generated", "the secret is to keep it
// simple" (to: under the floor), "the password is now-expired" are kept. Names used for what is
// no secret ("the token is valid") take no value this way.

// minProseSecret is the shortest unquoted word taken as a secret after "is": shorter ones are
// numbers and abbreviations ("the password is 12 characters long").
const minProseSecret = 6

// proseValue returns the span of the value v[start:end] that follows key and "is" or "was".
func proseValue(v, key string, start, end int, kind string) (span, bool) {
	if !strongName(key) {
		return span{}, false
	}
	value := v[start:end]
	quoted := false
	for _, q := range []string{`\"`, `"`, `'`, "`"} {
		if len(value) >= 2*len(q) && strings.HasPrefix(value, q) && strings.HasSuffix(value, q) {
			start, end, quoted = start+len(q), end-len(q), true
			break
		}
	}
	if !quoted {
		start, end, quoted = proseWord(v, start, end)
	}
	value = v[start:end]
	if !maskableValue(value) || len(value) > maxLineValue || strings.ContainsAny(value, "\n\r") {
		return span{}, false
	}
	if !quoted && !credentialShaped(value) && !secretWord(value) {
		return span{}, false
	}
	return span{start: start, end: end, kind: kind}, true
}

// credentialShaped: w is at least minProseSecret bytes and holds a digit or an ASCII symbol
// other than a hyphen, an apostrophe or a full stop, which words hold.
func credentialShaped(w string) bool {
	if len(w) < minProseSecret {
		return false
	}
	for i := 0; i < len(w); i++ {
		c := w[i]
		if c >= '0' && c <= '9' {
			return true
		}
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
		if !letter && strings.IndexByte("-'.", c) < 0 {
			return true
		}
	}
	return false
}

// secretWord: w is at least minProseSecret bytes of letters (in any script) and does not
// describe a secret (describing.go): "swordfish", not "required", "incorrect" or "stored".
func secretWord(w string) bool {
	if len(w) < minProseSecret || describes(w) {
		return false
	}
	for i := 0; i < len(w); i++ {
		if c := w[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80) {
			return false
		}
	}
	return true
}

// proseWord returns the word v[start:end] without the sentence's punctuation after it, the
// typographic quotes around it (never part of a secret, prose.go: “swordfish”, «swordfish»),
// then taken as quoted, and markdown bold (**swordfish**), so that it has the placeholder it
// has as a JSON value.
func proseWord(v string, start, end int) (int, int, bool) {
	quotes := strings.Join(typographicQuotes, "")
	w := strings.TrimRight(v[start:end], ".,!?:;)…"+quotes)
	end = start + len(w)
	w = strings.TrimLeft(w, quotes)
	quoted := start+len(w) < end
	start = end - len(w)
	if len(w) > 4 && strings.HasPrefix(w, "**") && strings.HasSuffix(w, "**") {
		start, end = start+2, end-2
	}
	return start, end, quoted
}
