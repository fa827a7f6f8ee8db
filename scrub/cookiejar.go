package scrub

import (
	"regexp"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// A cookie jar is written as objects, one a cookie: a browser automation tool's (Playwright,
// Puppeteer, Selenium, the DevTools protocol: {"name": "sessionid", "value": "…", "domain":
// …}), a Python repr of one ({'name': 'session', 'value': '…'}), Go's http.Cookie marshalled
// ({"Name": …, "Value": …}). Such an object is the cookie name=value: its value is masked when
// the name is a secret name (auth_token) or a session cookie's and the value is one (cookies.go),
// in a JSON value or an attribute map as in text that is not JSON as a whole (a log line
// `cookies: [{…}]`), with the same placeholder.

// cookieMembers are the names of a cookie object's name and value members.
var cookieMembers = [...][2]string{{"name", "value"}, {"Name", "Value"}}

// cookieObject is an object without objects inside it, in text; cookieMember one of its name or
// value members, with a quoted string value (group 2, quotes included).
var (
	cookieObject = regexp.MustCompile(`\{[^{}]*\}`)
	cookieMember = regexp.MustCompile(`["'](name|value|Name|Value)["']\s*:\s*(` + quotedString + `)`)
)

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
		name, ok := attrs.Get(m[0])
		value, has := attrs.Get(m[1])
		if ok && has && name.Type() == pcommon.ValueTypeStr && value.Type() == pcommon.ValueTypeStr {
			if kind := s.cookieKind(name.Str(), value.Str()); kind != "" {
				return m[1], kind
			}
		}
	}
	return "", ""
}

// cookieObjectSpans returns the spans of the values of the cookie objects in v that are masked.
// An object's members are matched as written with `"` or `'`; escaped ones ({\"name\": …}) are
// found in the text with its escapes decoded (unescape.go).
func (s *Scrubber) cookieObjectSpans(v string) []span {
	if !strings.Contains(v, "alue") || strings.IndexByte(v, '{') < 0 {
		return nil
	}
	var out []span
	for _, o := range cookieObject.FindAllStringIndex(v, -1) {
		var name string
		var value []int
		for _, m := range cookieMember.FindAllStringSubmatchIndex(v[o[0]:o[1]], -1) {
			quoted := v[o[0]+m[4]+1 : o[0]+m[5]-1]
			if strings.EqualFold(v[o[0]+m[2]:o[0]+m[3]], "name") {
				name = quoted
			} else {
				value = []int{o[0] + m[4] + 1, o[0] + m[5] - 1}
			}
		}
		if name == "" || value == nil || !maskableValue(v[value[0]:value[1]]) {
			continue
		}
		if kind := s.cookieKind(name, v[value[0]:value[1]]); kind != "" {
			out = append(out, span{start: value[0], end: value[1], kind: kind})
		}
	}
	return out
}
