package scrub

import "strings"

// HTTP header values written as text (a curl command in a prompt, a request dump in a tool
// result, a log line) hold their secret past the first word, where a `name: value` pair ends:
//
//	Cookie: _ga=GA1.2.3; sessionid=abc123     every cookie after the first is a secret too
//	Set-Cookie: a=1; Path=/, sid=abc123       repeated headers joined with ", " (HTTP clients)
//	Authorization: Token abc123               the word after the scheme is the credential
//	Authorization: Bearer short1              a bearer token too short for bearer_token
//
// headerSpan returns the span to mask for the unquoted value v[start:end] under the key at
// v[keyStart:keyEnd], when it names a cookie or an authorization header and the value goes on
// past its first word.
func (s *Scrubber) headerSpan(v string, keyStart, keyEnd, start, end int) (span, bool) {
	name := normalizeKeyName(v[keyStart:keyEnd])
	switch {
	case strings.Contains(name, "cookie"):
		next := cookiesEnd(v, end)
		if headerOpens(v, keyStart) {
			next = max(next, headerEnd(v, end))
		}
		if next > end {
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
// and spaces, or after a ',' and spaces when it is name=value (Set-Cookie values joined), up to
// the end of the line or a quote.
func cookiesEnd(v string, end int) int {
	for end < len(v) && (v[end] == ';' || v[end] == ',' && startsPair(v, end+1, "=")) {
		from, to := nextWord(v, end+1)
		if to == from {
			break
		}
		end = to
	}
	return end
}

// headerOpens tells whether the header name at v[keyStart] opens its line (a request dump) or
// a quoted string (curl -H "Cookie: …", a list of header lines in JSON): its value then ends
// with them, and holds what a word does not (a Set-Cookie's Expires=Wed, 21 Oct 2026 …, and
// the cookies after it).
func headerOpens(v string, keyStart int) bool {
	i := keyStart
	for i > 0 && (v[i-1] == ' ' || v[i-1] == '\t') {
		i--
	}
	return i == 0 || strings.IndexByte("\n\r\"'`", v[i-1]) >= 0
}

// cookieNameBeforeQuote tells whether the unquoted value v[start:end] under the name of
// cookies v[keyStart:keyEnd] is a cookie's name and '=' before its value in quotes, as Python's
// repr() of a SimpleCookie writes it (<SimpleCookie: sessionid='…'>; cookies=dict(sid='…')):
// cookieSpans masks that value when it carries a credential, and the name is no secret. The
// string in quotes closes on its line and holds cookie octets alone; a quote that closes the
// string around the header ("Cookie: YWJj=", "x": a value with its base64 padding) is
// followed by what a cookie's value does not hold.
func cookieNameBeforeQuote(v string, keyStart, keyEnd, start, end int) bool {
	if end-start < 2 || v[end-1] != '=' || !isKeyByte(v[end-2]) || !cookieJarName(v[keyStart:keyEnd]) {
		return false
	}
	quoted := quotedCookieEnd(v, end)
	return quoted > end && cookieOctets(v[end+1:quoted-1]) == quoted-end-2
}

// headerEnd is the end of the header value that goes on at v[end]: the end of the line, a
// quote, a backslash (an escape: \" or \r\n in JSON) or a placeholder, without trailing spaces.
func headerEnd(v string, end int) int {
	for end < len(v) && strings.IndexByte("\n\r\"'`<>\\", v[end]) < 0 {
		end++
	}
	for end > 0 && (v[end-1] == ' ' || v[end-1] == '\t') {
		end--
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
