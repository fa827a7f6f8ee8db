package scrub

import (
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// A cookie jar is written as objects, one a cookie: a browser automation tool's (Playwright,
// Puppeteer, Selenium, the DevTools protocol: {"name": "sessionid", "value": "…", "domain":
// …}), a Python repr of one ({'name': 'session', 'value': '…'}), Go's http.Cookie marshalled
// ({"Name": …, "Value": …}), and in text a keyword call: Python's repr() of an
// http.cookiejar.Cookie (Cookie(version=0, name='sessionid', value='…', port=None, …), also
// inside a CookieJar's or requests' RequestsCookieJar's repr), or the call in code
// (create_cookie(name="sid", value="…")). Such an object is the cookie name=value: its value
// is masked when the name is a secret name (auth_token) or a session cookie's and the value is
// one (cookies.go), in a JSON value or an attribute map as in text that is not JSON as a whole
// (a log line `cookies: [{…}]`), with the same placeholder.

// cookieMembers are the names of a cookie object's name and value members.
var cookieMembers = [...][2]string{{"name", "value"}, {"Name", "Value"}}

// cookieKind returns the kind under which the value of the cookie name=value is masked, or "".
func (s *Scrubber) cookieKind(name, value string) string {
	if s.assignment == nil {
		return "" // secret_field is off
	}
	if kind := s.kindOf(name); kind != "" {
		return kind
	}
	if sessionCookieName(name) && sessionCookieValue(value) {
		return KindSecretField
	}
	return ""
}

// jsonCookie returns the key of the value member of t when t is a cookie object whose value is
// masked, and the kind it is masked under.
func (s *Scrubber) jsonCookie(t map[string]any) (string, string) {
	for _, m := range cookieMembers {
		name, ok := t[m[0]].(string)
		value, isString := t[m[1]].(string)
		if ok && isString {
			if kind := s.cookieKind(name, value); kind != "" {
				return m[1], kind
			}
		}
	}
	return "", ""
}

// mapCookie is jsonCookie for an attribute map.
func (s *Scrubber) mapCookie(attrs pcommon.Map) (string, string) {
	for _, m := range cookieMembers {
		name, ok := attrs.Get(m[0]) // most maps have no name member: one scan of the map, not two
		if !ok || name.Type() != pcommon.ValueTypeStr {
			continue
		}
		if value, has := attrs.Get(m[1]); has && value.Type() == pcommon.ValueTypeStr {
			if kind := s.cookieKind(name.Str(), value.Str()); kind != "" {
				return m[1], kind
			}
		}
	}
	return "", ""
}

// A jar is also written as a map from cookie names to values under a name of cookies
// (requests' get_dict(), cookies={'sessionid': '…'}, {"cookies": {"sessionid": "…"}}): each
// member is the cookie name=value, masked as a cookie object's is, in JSON, an attribute map
// and text alike. A map under a secret name is otherwise read by its own names, and a session
// cookie's name as a JSON key is an id that groups telemetry (sessionId), so its value leaked.

// cookieJarName tells whether key names cookies (cookies, Cookie, request.cookies), so that a
// map under it is a jar; ASCII case is ignored, without a lower-cased copy.
func cookieJarName(key string) bool {
	for i := 0; i+len("cookie") <= len(key); i++ {
		if strings.EqualFold(key[i:i+len("cookie")], "cookie") {
			return true
		}
	}
	return false
}

// jsonJar masks, in a decoded JSON map that is a jar, the values of the cookies that carry a
// credential (cookieKind).
func (s *Scrubber) jsonJar(jar map[string]any, r *Report) {
	for name, value := range jar {
		if str, ok := value.(string); ok {
			if kind := s.cookieKind(name, str); kind != "" {
				jar[name] = s.secretValue(kind, str, r)
			}
		}
	}
}

// mapJar is jsonJar for an attribute map (a log body's).
func (s *Scrubber) mapJar(jar pcommon.Map, r *Report) {
	for name, value := range jar.All() {
		if value.Type() != pcommon.ValueTypeStr {
			continue
		}
		if kind := s.cookieKind(name, value.Str()); kind != "" {
			value.SetStr(s.secretValue(kind, value.Str(), r))
		}
	}
}

// jarMemberSpans returns, for the map that opens at v[open] ('{') after a name of cookies in
// text, the spans of the values of its cookies that carry a credential: members 'name':
// 'value' in ' or " quotes (or name=value), the name also unquoted (a JavaScript object
// literal, a YAML flow mapping: {sessionid: '…'}); a member whose value is no string (a
// number) is passed over, and the map is read up to its '}' or to what is no such member (an
// object inside it).
func (s *Scrubber) jarMemberSpans(v string, open int) []span {
	var out []span
	for i := open + 1; i < len(v); {
		switch c := v[i]; {
		case c == ' ' || c == ',' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '"' || c == '\'' || isKeyByte(c):
			name, after := jarMemberName(v, i)
			if after < 0 {
				return out
			}
			start, end, closed := memberValue(v, after)
			if end == 0 {
				next := after + strings.IndexAny(v[after:], ",}{[")
				if next < after || v[next] == '{' || v[next] == '[' {
					return out
				}
				i = next
				continue
			}
			if !closed {
				return out
			}
			if value := v[start+1 : end-1]; maskableValue(value) {
				if kind := s.cookieKind(name, value); kind != "" {
					out = append(out, span{start: start + 1, end: end - 1, kind: kind})
				}
			}
			i = end
		default:
			return out // '}', or what is no member
		}
	}
	return out
}

// jarMemberName returns the name of the jar's member that starts at v[i], in quotes or
// unquoted (a run of key bytes), and where the text after it starts, or -1 when a quoted name
// does not close.
func jarMemberName(v string, i int) (string, int) {
	if q := v[i]; q == '"' || q == '\'' {
		end := closingQuote(v, i+1, q)
		if end < 0 {
			return "", -1
		}
		return v[i+1 : end], end + 1
	}
	end := i
	for end < len(v) && isKeyByte(v[end]) {
		end++
	}
	return v[i:end], end
}

// jarCallBefore tells whether the text before v[eq] ('='), spaces aside, is requests'
// RequestsCookieJar.get_dict(), the call that writes a jar as a map from cookie names to values
// (a log line `jar.get_dict() = {'sessionid': '…'}`), so that the map after the '=' is a jar
// under no name of cookies.
func jarCallBefore(v string, eq int) bool {
	return strings.HasSuffix(strings.TrimRight(v[:eq], " "), "get_dict()")
}

// maxCookieDepth is the deepest a cookie object is found in a text: a text of braces alone
// (1 MiB of '{') is read without keeping an object for each.
const maxCookieDepth = 64

// cookieObjectSpans returns the spans of the values of the cookie objects in v that are masked.
// An object is a {…} with members `name: value`, or a keyword call (…) or a cookie record
// Cookie[…] (cookieRecordAt) with `name=value`; its members are matched as written with `"` or
// `'`; escaped ones ({\"name\": …}) are found in the text with its escapes decoded
// (unescape.go). The text is read once, objects nested (the DevTools protocol's partitionKey
// {…} in a cookie, a repr's rest={…}) and strings skipped, so a member belongs to the object
// that holds it and a brace in a string ("{x}") is no object's. A closing brace, parenthesis
// or bracket closes the objects opened inside the one it closes (an unmatched '(' in a value
// written as code); one with no opening to match is text. An object
// still open where the text ends (a log line or an attribute cut at a length limit) is read
// as it is, and so is a value cut before its closing quote (cookieObject.set).
func (s *Scrubber) cookieObjectSpans(v string) []span {
	if strings.IndexAny(v, "{([") < 0 || !mayHoldCookieObject(v) { // one pass before nine
		return nil
	}
	return s.cookieObjects(v, false)
}

// cookieObjects is cookieObjectSpans; in a string that is not itself escaped JSON (escaped
// false), a string inside an object that holds escaped quotes is JSON written in a string
// (`{"tool_result": "[{\"name\": \"sid\", …`): its objects are read with its escapes decoded.
// The text with its escapes decoded as a whole (unescape.go) does not find them: the quotes of
// the string around them are quotes like theirs there.
func (s *Scrubber) cookieObjects(v string, escaped bool) []span {
	var out []span
	var open []cookieObject // the objects around v[i], the innermost last
	calls, records := 0, 0  // the objects of open that are calls, opened by '(', and records, by '['
	deeper := 0             // the objects around v[i] inside the innermost of open, more than maxCookieDepth
	var unquoted [2]int     // per quote ('"', '\''): no string opens before this (a quote without its closing one on its line)
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case (c == '{' || c == '(') && (deeper > 0 || len(open) == maxCookieDepth):
			deeper++
		case c == '{' || c == '(' || c == '[' && deeper == 0 && len(open) < maxCookieDepth && cookieRecordAt(v, i):
			o := cookieObject{closer: '}', open: i + 1}
			switch c {
			case '(':
				o.closer, calls = ')', calls+1
			case '[':
				o.closer, records = ']', records+1
			}
			open = append(open, o)
		case (c == '}' || c == ')') && deeper > 0:
			deeper--
		case c == '}' && len(open) > calls+records, c == ')' && calls > 0, c == ']' && records > 0 && deeper == 0:
			for closed := false; !closed; {
				o := open[len(open)-1]
				open = open[:len(open)-1]
				switch o.closer {
				case ')':
					calls--
				case ']':
					records--
				}
				out = s.appendCookie(out, v, o)
				closed = o.closer == c
			}
		case (c == '"' || c == '\'') && len(open) > 0 && deeper == 0:
			q := strings.IndexByte(`"'`, c)
			if i < unquoted[q] {
				continue
			}
			end, closed, inner := stringEnd(v, i)
			if inner && !escaped {
				out = append(out, s.escapedCookieObjects(v, i+1, end)...)
				if !closed {
					unquoted[q] = end
				}
				i = end - 1
				continue
			}
			if !closed {
				unquoted[q] = end
				continue
			}
			o := &open[len(open)-1]
			if o.closer == ')' {
				o.argument(v, i, end)
			}
			if member := v[i+1 : end-1]; cookieMember(member) {
				end = o.set(v, member, end)
			}
			i = end - 1 // past the string: its braces are text
		case len(open) > 0 && deeper == 0 && (i == 0 || !isIdentifierByte(v[i-1])):
			// A JavaScript object literal's unquoted member name ({name: "sid", value: "…"}), or
			// a keyword argument's (Cookie(name='sid', value='…')).
			end := i
			for end < len(v) && isIdentifierByte(v[end]) {
				end++
			}
			o := &open[len(open)-1]
			if member := o.keywordName(v, v[i:end]); cookieMember(member) {
				end = o.set(v, member, end)
			}
			i = max(i, end-1)
		}
	}
	for _, o := range open {
		out = s.appendCookie(out, v, o) // cut before it closes
	}
	return out
}

// cookieRecordAt tells whether the '[' at v[i] opens a Java record's toString of a cookie
// type (Cookie[name=sessionid, value=…], SessionCookie[…]): the identifier before it ends in
// Cookie. Other brackets hold a list or an index (cookies[name]), no object.
func cookieRecordAt(v string, i int) bool {
	return strings.HasSuffix(v[:i], "Cookie")
}

// cookieRecordStarts tells whether a cookie record's toString starts at v[i]: an identifier
// ending in Cookie, then '[' (cookieRecordAt).
func cookieRecordStarts(v string, i int) bool {
	j := i
	for j < len(v) && isIdentifierByte(v[j]) {
		j++
	}
	return j < len(v) && v[j] == '[' && cookieRecordAt(v, j)
}

// escapedCookieObjects returns the spans, in v, of the values of the cookie objects in
// v[from:to], a string holding escaped quotes, read with its escapes decoded.
func (s *Scrubber) escapedCookieObjects(v string, from, to int) []span {
	view, at := plainView(v[from:to])
	found := s.cookieObjects(view, true)
	for k := range found {
		found[k].start, found[k].end = from+at[found[k].start], from+at[found[k].end]
	}
	return found
}

// appendCookie appends to out the span of o's value when o is a cookie whose value is masked.
func (s *Scrubber) appendCookie(out []span, v string, o cookieObject) []span {
	if o.name == "" || o.valueStart == 0 {
		return out
	}
	value := v[o.valueStart:o.valueEnd]
	if !maskableValue(value) || o.bareValue && !o.bareName {
		return out
	}
	if kind := s.cookieKind(o.name, value); kind != "" {
		out = append(out, span{start: o.valueStart, end: o.valueEnd, kind: kind})
	}
	return out
}

// cookieObject is an object being read by cookieObjectSpans.
type cookieObject struct {
	name       string
	valueStart int // of the value member's string, after its quote; 0 when there is none
	valueEnd   int
	closer     byte // ')' for a keyword call, ']' for a record's toString (Cookie[…]), or '}'
	open       int  // where its members start, after the '{', '(' or '['
	// An unquoted value is a toString's (Cookie(name=sessionid, value=…)) when its name is
	// unquoted too; after a quoted name it is a variable in code (value=session_key).
	bareName, bareValue bool
	args                int // a call's positional string arguments read (argument): up to 2
	argEnd              int // the end of the first
}

// cookieMember tells whether member is the name of a cookie object's name or value member.
func cookieMember(member string) bool {
	return member == "name" || member == "Name" || member == "value" || member == "Value"
}

// set records in o the string after the member name that ends at v[end] and a ':' or '=', and
// returns where the text after it starts: after that string, or end when there is none. A
// value string that does not close on its line was cut (at a length limit, with a marker such
// as "…" after it, or none): its value is what is left, to where the cookie-value alphabet
// ends (cookieOctets); a name cut so is no name.
func (o *cookieObject) set(v, member string, end int) int {
	start, valueEnd, closed := memberValue(v, end)
	switch {
	case valueEnd == 0 && o.closer != ')' && member[0] <= 'Z' && end < len(v) && v[end] == ':':
		return o.setGoField(v, member, end+1) // Name:sessionid, a Go field (upper case) in %+v
	case valueEnd == 0:
		return o.setBare(v, member, end)
	case member[0] == 'n' || member[0] == 'N':
		if closed {
			o.name = v[start+1 : valueEnd-1]
		}
	case closed:
		o.valueStart, o.valueEnd = start+1, valueEnd-1
	default:
		o.valueStart, o.valueEnd = start+1, start+1+cookieOctets(v[start+1:valueEnd])
	}
	return valueEnd
}

// Go's %+v of an http.Cookie (a struct value, in a slice or alone; &{…} through a pointer to
// a type without its String method) writes its fields unquoted, `Field:value` separated by
// spaces: {Name:sessionid Value:… Quoted:false Path:/ Domain: …}. A value ends at the space
// before the next field (an upper-case word and ':'), at the '}' when it is the last field,
// or at the end of its line.

// setGoField records in o the unquoted value of a Go struct's field Name or Value that starts
// at v[start], and returns its end.
func (o *cookieObject) setGoField(v, member string, start int) int {
	end := start
	for end < len(v) && v[end] != '\n' && v[end] != '}' && !(v[end] == ' ' && goFieldAt(v, end+1)) {
		end++
	}
	if member == "Name" {
		o.name = v[start:end]
	} else {
		o.valueStart, o.valueEnd = start, end
	}
	return end
}

// goFieldAt tells whether a field of Go's %+v, an upper-case word and ':', starts at v[i].
func goFieldAt(v string, i int) bool {
	if i == len(v) || v[i] < 'A' || v[i] > 'Z' {
		return false
	}
	for i++; i < len(v) && isIdentifierByte(v[i]); i++ {
	}
	return i < len(v) && v[i] == ':'
}

// cookieOctets returns the length of the run of cookie-value bytes (RFC 6265's cookie-octet:
// printable ASCII but '"', ',', ';' and '\\') that v starts with.
func cookieOctets(v string) int {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c <= ' ' || c >= 0x7f || c == '"' || c == ',' || c == ';' || c == '\\' {
			return i
		}
	}
	return len(v)
}

// isIdentifierByte tells whether c can be part of a JavaScript identifier written in ASCII.
func isIdentifierByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '$'
}

// stringEnd returns the end of the string that the quote v[i] opens (a '"' string's quotes may
// be escaped with '\\') and true, or, when it does not close on its line, the line's end and
// false; and whether the string holds an escaped '"' (JSON written in a string).
func stringEnd(v string, i int) (end int, closed, escapedQuote bool) {
	for j := i + 1; j < len(v); j++ {
		switch v[j] {
		case v[i]:
			return j + 1, true, escapedQuote
		case '\n':
			return j, false, escapedQuote
		case '\\':
			if v[i] == '"' {
				j++
				escapedQuote = escapedQuote || j < len(v) && v[j] == '"'
			}
		}
	}
	return len(v), false, escapedQuote
}

// memberValue returns the span, quotes included, of the string after the member name that ends
// at v[i] and a ':' or an '=' (spaces around it; not "==", a comparison), and whether the
// string closes on its line (else the span ends with the line, or the text), or 0, 0 when there
// is none.
func memberValue(v string, i int) (int, int, bool) {
	i = spaceEnd(v, i)
	if i == len(v) || v[i] != ':' && (v[i] != '=' || i+1 < len(v) && v[i+1] == '=') {
		return 0, 0, false
	}
	i = spaceEnd(v, i+1)
	if i == len(v) || v[i] != '"' && v[i] != '\'' {
		return 0, 0, false
	}
	end, closed, _ := stringEnd(v, i)
	return i, end, closed
}
