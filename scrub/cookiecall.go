package scrub

import "strings"

// A cookie is also written as a call without quotes or member names: a toString that writes
// its fields unquoted, name=value in parentheses or braces (a Kotlin data class, Lombok's
// @ToString, Guava's toStringHelper: Cookie(name=sessionid, value=…, domain=…); a Java
// record's, in brackets: Cookie[name=sessionid, value=…]), and a call that sets a cookie from
// its first two arguments, name and value (jar.set('sessionid', '…'), response.set_cookie(
// 'sessionid', '…'), res.cookie('connect.sid', '…'), setcookie(…), new Cookie("JSESSIONID",
// "…"), and any setter under a name only a session cookie has: store.put("JSESSIONID", "…")).
// cookieObjects reads both as it reads the quoted forms.

// mayHoldCookieObject tells whether v holds what a cookie object needs: a value member, or a
// call that sets a cookie, named after cookies or a jar or with a name only a session cookie
// has as its first argument (cookieSetterBefore).
func mayHoldCookieObject(v string) bool {
	for _, word := range [...]string{"alue", "ookie", "OOKIE", "jar", "Jar", "sessionid", "SESSI", "SessionId", ".sid"} {
		if strings.Contains(v, word) {
			return true
		}
	}
	return false
}

// setBare records in o the unquoted value after the member name that ends at v[end] and an
// '=' (not "==", a comparison), to where the cookie-value alphabet ends or a ')', '}' or ']'
// closes the object, and returns its end, or end when there is none.
func (o *cookieObject) setBare(v, member string, end int) int {
	i := indentEnd(v, end)
	if i == len(v) || v[i] != '=' || i+1 < len(v) && v[i+1] == '=' {
		return end
	}
	start := indentEnd(v, i+1)
	n := cookieOctets(v[start:])
	if k := strings.IndexAny(v[start:start+n], ")}]"); k >= 0 {
		n = k
	}
	switch {
	case n == 0:
		return end
	case member[0] == 'n' || member[0] == 'N':
		o.name, o.bareName = v[start:start+n], true
	default:
		o.valueStart, o.valueEnd, o.bareValue = start, start+n, true
	}
	return start + n
}

// argument records the string in quotes v[i:end] of the call o when it is the call's first
// argument and the call sets a cookie (the cookie's name), or its second (the value); any
// other string ends the positional arguments.
func (o *cookieObject) argument(v string, i, end int) {
	switch {
	case o.args == 0 && spaceEnd(v, o.open) == i && cookieSetterBefore(v, o.open-1, v[i+1:end-1]):
		o.name, o.args, o.argEnd = v[i+1:end-1], 1, end
	case o.args == 1 && nextArgumentAt(v, o.argEnd) == i:
		o.valueStart, o.valueEnd, o.args = i+1, end-1, 2
	default:
		o.args = 2
	}
}

// cookieSetterBefore tells whether the call whose '(' is at v[paren], its first argument the
// string name ("" when it has none), sets a cookie: its method sets (set…, add…, put…) or is
// the cookie itself (res.cookie, new Cookie), and its callee (the dotted name before the '(')
// names cookies or a jar, or name is one only a session cookie has (sessionCookieOnlyName:
// session.set('sessionid', …)). A getter's second argument is a default (cookies.get('sid',
// 'not-logged-in')); another object's set under another name is no cookie's (cache.set(
// 'session', …), set('session_id', …): an agent's session id, which groups telemetry).
func cookieSetterBefore(v string, paren int, name string) bool {
	start := paren
	for start > 0 && paren-start < maxNameBefore && (isIdentifierByte(v[start-1]) || v[start-1] == '.') {
		start--
	}
	callee := asciiLower(v[start:paren])
	method := callee[strings.LastIndexByte(callee, '.')+1:]
	setter := method == "cookie" || strings.HasPrefix(method, "set") || strings.HasPrefix(method, "add") || strings.HasPrefix(method, "put")
	return setter && (strings.Contains(callee, "cookie") || strings.Contains(callee, "jar") || sessionCookieOnlyName(name))
}

// sessionCookieOnlyName tells whether name is one that only a session cookie has, written as
// its framework writes it: Django's sessionid, Java's JSESSIONID, PHP's PHPSESSID, ASP.NET's
// ASP.NET_SessionId, ASP's ASPSESSIONID…, Express's connect.sid (a name ending in .sid). A
// program also names its own keys session, sid, session_id or sessionId.
func sessionCookieOnlyName(name string) bool {
	switch name {
	case "sessionid", "JSESSIONID", "PHPSESSID", "ASP.NET_SessionId":
		return true
	}
	return strings.HasPrefix(name, "ASPSESSIONID") || len(name) > len(".sid") && strings.HasSuffix(name, ".sid")
}

// spaceEnd returns the end of the whitespace, line breaks included, at v[i].
func spaceEnd(v string, i int) int {
	return len(v) - len(strings.TrimLeft(v[i:], " \t\r\n"))
}

// nextArgumentAt returns where the argument after the one that ends at v[i] starts: past a
// ',' and the whitespace around it, or -1.
func nextArgumentAt(v string, i int) int {
	if i = spaceEnd(v, i); i == len(v) || v[i] != ',' {
		return -1
	}
	return spaceEnd(v, i+1)
}

// keywordName is the member name of a keyword argument of o, with Django's key= (the cookie's
// name in HttpResponse.set_cookie(key='sessionid', value=…)) read as name when o is a call that
// sets a cookie.
func (o *cookieObject) keywordName(v, member string) string {
	if member == "key" && o.closer == ')' && cookieSetterBefore(v, o.open-1, "") {
		return "name"
	}
	return member
}
