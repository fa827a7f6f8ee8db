package scrub

import "strings"

// HTTP header values written as text (a curl command in a prompt, a request dump in a tool
// result, a log line) hold their secret past the first word, where a `name: value` pair ends:
//
//	Cookie: _ga=GA1.2.3; sessionid=abc123     every cookie after the first is a secret too
//	Authorization: Token abc123               the word after the scheme is the credential
//	Authorization: Bearer short1              a bearer token too short for bearer_token
//
// headerSpan returns the span to mask for the unquoted value v[start:end] under key, when key
// names a cookie or an authorization header and the value goes on past its first word.
func (s *Scrubber) headerSpan(key, v string, start, end int) (span, bool) {
	name := normalizeKeyName(key)
	switch {
	case strings.Contains(name, "cookie"):
		if next := cookiesEnd(v, end); next > end {
			return span{start: start, end: next, kind: KindSecretField}, true
		}
	case strings.Contains(name, "authorization"):
		if !schemeWord(v[start:end]) {
			return span{}, false
		}
		credStart, credEnd := nextWord(v, end)
		if credEnd == credStart {
			return span{}, false
		}
		// The scheme words bearer and basic stay, as their own rules leave them; the token
		// gets their kind, so a longer one has the placeholder those rules give it.
		switch kind := strings.ToLower(v[start:end]); kind {
		case "bearer", "basic":
			if kind == "basic" {
				kind = "basic_auth"
			} else {
				kind = "bearer_token"
			}
			if _, on := s.actions[kind]; !on {
				kind = KindSecretField
			}
			return span{start: credStart, end: credEnd, kind: kind}, true
		}
		return span{start: start, end: credEnd, kind: KindSecretField}, true
	}
	return span{}, false
}

// cookiesEnd is the end of the cookies that follow the one ending at v[end], each after a ';'
// and spaces, up to the end of the line or a quote.
func cookiesEnd(v string, end int) int {
	for end < len(v) && v[end] == ';' {
		from, to := nextWord(v, end+1)
		if to == from {
			break
		}
		end = to
	}
	return end
}

// nextWord returns the bounds of the word after the spaces or tabs at v[i] (on the same line),
// up to whitespace, a quote, '<', '>' or ';', without trailing ",)}]\\"; empty when there is
// none.
func nextWord(v string, i int) (int, int) {
	for i < len(v) && (v[i] == ' ' || v[i] == '\t') {
		i++
	}
	j := i
	for j < len(v) && strings.IndexByte(" \t\r\n\"'<>;", v[j]) < 0 {
		j++
	}
	for j > i && strings.IndexByte(",)}]\\", v[j-1]) >= 0 {
		j-- // a backslash before a quote escapes it: the quote ends the value (\")
	}
	return i, j
}

// schemeWord: an authorization scheme (Bearer, Basic, Token, Digest, AWS4-HMAC-SHA256 …).
func schemeWord(w string) bool {
	if w == "" || len(w) > 32 || !(w[0] >= 'A' && w[0] <= 'Z' || w[0] >= 'a' && w[0] <= 'z') {
		return false
	}
	for i := 0; i < len(w); i++ {
		if !isKeyByte(w[i]) || w[i] == '.' || w[i] == '_' {
			return false
		}
	}
	return true
}
