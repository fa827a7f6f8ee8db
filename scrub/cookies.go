package scrub

import "strings"

// A session cookie's value is a bearer credential: whoever replays it is logged in. Its name is
// no secret name (session, sid, PHPSESSID, connect.sid, _myapp_session), so after a Cookie or
// Set-Cookie header name the value is masked as that header's (headers.go), and elsewhere it
// was kept: `curl -b 'sid=…'`, a cookie jar in a log line, a Set-Cookie value in a list of
// header pairs. Written as a cookie, name=value, a value is masked when its name is a session
// cookie's (sessionCookieName) and the value is one (sessionCookieValue: 8 characters or more,
// whatever their case), or when cookie attributes follow it (`; Path=/`, `; HttpOnly`: a
// Set-Cookie value under any name) and it is shaped like a credential (cookieCredential).
// Plain values stay (theme=dark, lang=en, session=expired, Path=/, SameSite=Lax), and so do
// session ids written as JSON keys or attributes (session.id, sessionId): those group
// telemetry, and the JSON walk takes no cookie for them.

// cookieSpans returns the spans of the cookie values in v that are credentials, and those of
// the jars written as maps after get_dict() = (cookiejar.go).
func (s *Scrubber) cookieSpans(v string) []span {
	var out []span
	for eq := strings.IndexByte(v, '='); eq >= 0; {
		if open := indentEnd(v, eq+1); open < len(v) && v[open] == '{' && jarCallBefore(v, eq) {
			out = append(out, s.jarMemberSpans(v, open)...)
		}
		keyStart := eq
		for keyStart > 0 && eq-keyStart < maxNameBefore && isKeyByte(v[keyStart-1]) {
			keyStart--
		}
		end := eq + 1
		if quoted := quotedCookieEnd(v, end); quoted > end {
			// name='value' (<SimpleCookie: sessionid='…'>, dict(sessionid='…')): a session
			// cookie's value in quotes, under the name that names the unquoted one.
			if value := v[end+1 : quoted-1]; keyStart < eq && sessionCookieName(v[keyStart:eq]) && sessionCookieValue(value) {
				out = append(out, span{start: end + 1, end: quoted - 1, kind: KindSecretField})
			}
			eq = indexFrom(v, quoted, '=')
			continue
		}
		for end < len(v) && strings.IndexByte(" \t\r\n;,=\"'`<>\\", v[end]) < 0 {
			end++
		}
		// Base64 padding; any other '=' starts the next pair (a=b=c), and so does an '=' after
		// a value holding '(', code, where it starts a keyword argument (cookies=dict(sid='…')).
		for pad := 0; pad < 2 && end < len(v) && v[end] == '=' && strings.IndexByte(v[eq+1:end], '(') < 0; pad++ {
			end++
		}
		valueEnd := end
		if keyStart > 0 && (v[keyStart-1] == '?' || v[keyStart-1] == '&') {
			if i := strings.IndexAny(v[eq+1:end], "&#"); i >= 0 {
				valueEnd = eq + 1 + i // a query parameter: ?sid=…&x=1
			}
		}
		for valueEnd > eq+1 && strings.IndexByte(")}]", v[valueEnd-1]) >= 0 {
			valueEnd-- // dict(sessionid=…)
		}
		key, value := v[keyStart:eq], v[eq+1:valueEnd]
		// A value that runs into a placeholder was longer when it was scrubbed, and judged so:
		// sid=0seCret:f(x) is no session id (its parentheses are code), and once secret: had its
		// value masked, the second pass took "0seCret:" for one, and scrubbing was not
		// idempotent.
		intoPlaceholder := strings.HasPrefix(v[end:], "<secret:")
		if key != "" && !intoPlaceholder && (sessionCookieName(key) && sessionCookieValue(value) || cookieCredential(value) && cookieAttributesAt(v, end)) {
			out = append(out, span{start: eq + 1, end: valueEnd, kind: KindSecretField})
		}
		eq = indexFrom(v, end, '=')
	}
	return out
}

// indexFrom returns the index of the first c in v at or after from, or -1.
func indexFrom(v string, from int, c byte) int {
	if i := strings.IndexByte(v[from:], c); i >= 0 {
		return from + i
	}
	return -1
}

// quotedCookieEnd returns the end of the string in quotes (' or ") that opens at v[i], closing
// quote included, when it closes on its line and holds no backslash; else i.
func quotedCookieEnd(v string, i int) int {
	if i == len(v) || v[i] != '\'' && v[i] != '"' {
		return i
	}
	for j := i + 1; j < len(v); j++ {
		switch v[j] {
		case v[i]:
			return j + 1
		case '\n', '\r', '\\':
			return i
		}
	}
	return i
}

// minCookieCredential is the shortest cookie value under any name taken for a credential:
// session ids are 16 bytes and more (PHP's 26 characters, Java's 32 hex digits, Django's 32),
// flags and preferences are shorter.
const minCookieCredential = 16

// minSessionCookie is the shortest value taken under a session cookie's name: the name says
// what the value is, so a short id (a framework's 8 to 15 characters, one letter case, no
// digit: sessionid=abcdefghij) is a credential too. States written there are shorter
// (session=expired, sid=42, session=none) or describe (session=disabled, session=anonymous).
const minSessionCookie = 8

// sessionCookieValue: v, under a session cookie's name, is at least minSessionCookie bytes of
// the cookie-value alphabet (RFC 6265: printable ASCII but '"', ',', ';', '\'), in any letter
// case, and is no word that describes (describing.go) and no code: parentheses
// (session=get_session()) or a variable's name of lower-case words joined by '_' or '.'
// (session=db_session, sid=self.sid).
func sessionCookieValue(v string) bool {
	if len(v) < minSessionCookie || describes(v) {
		return false
	}
	variable := true
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte("\",;\\()", c) >= 0 {
			return false
		}
		variable = variable && (c >= 'a' && c <= 'z' || c == '_' || c == '.')
	}
	return !variable || !strings.ContainsAny(v, "_.")
}

// cookieCredential: v is long enough for a session id and holds a digit, or letters of both
// cases, as random ids do (session=expired, lang=en, theme=dark do not).
func cookieCredential(v string) bool {
	if len(v) < minCookieCredential {
		return false
	}
	var upper, lower bool
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c >= '0' && c <= '9':
			return true
		case c >= 'A' && c <= 'Z':
			upper = true
		case c >= 'a' && c <= 'z':
			lower = true
		}
	}
	return upper && lower
}

// sessionCookieName tells whether key is the name of a session cookie: sid, connect.sid,
// a name ending in session (session, laravel_session, _myapp_session, __Host-session),
// sessionid (sessionid, JSESSIONID, ASP.NET_SessionId, session_id) or sessid (PHPSESSID), or
// ASP's ASPSESSIONID… . ssid (a wireless network's name) is none.
func sessionCookieName(key string) bool {
	lower := asciiLower(key)
	if lower == "sid" || strings.HasSuffix(lower, ".sid") || strings.HasSuffix(lower, "_sid") {
		return true
	}
	n := normalizeKeyName(lower)
	return strings.HasSuffix(n, "session") || strings.HasSuffix(n, "sessionid") ||
		strings.HasSuffix(n, "sessid") || strings.HasPrefix(n, "aspsessionid")
}

// cookieAttributesAt tells whether a Set-Cookie attribute follows at v[i]: a ';', spaces, then
// Path=, Domain=, Expires=, Max-Age=, SameSite=, HttpOnly, Secure or Partitioned.
func cookieAttributesAt(v string, i int) bool {
	if i == len(v) || v[i] != ';' {
		return false
	}
	from, to := nextWord(v, i+1)
	name, _, withValue := strings.Cut(asciiLower(v[from:to]), "=")
	switch name {
	case "path", "domain", "expires", "max-age", "samesite":
		return withValue
	case "httponly", "secure", "partitioned":
		return !withValue
	}
	return false
}
