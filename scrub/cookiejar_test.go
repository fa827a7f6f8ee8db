package scrub

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/pcommon"
)

// A cookie object ({"name": …, "value": …}) is the cookie name=value: its value is masked under a
// session cookie's name or a secret name, in text that is not JSON as a whole (a log line, a
// Python repr, JSON in a JSON string) as in a JSON value and an attribute map, with one
// placeholder.
func TestCookieObjectsInTextAreMasked(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	jar := `[{"name":"sessionid","value":"` + phpSession + `","domain":".example.com","path":"/"}]`
	want := s.placeholder(KindSecretField, phpSession)
	for _, in := range []string{
		jar,
		"cookies: " + jar,
		"INFO saved cookies " + jar + " for later",
		`driver.get_cookies() -> [{'domain': '.example.com', 'httpOnly': True, 'name': 'session', 'path': '/', 'secure': True, 'value': '` + phpSession + `'}]`,
		`{"tool_result": "cookies: [{\"name\": \"PHPSESSID\", \"value\": \"` + phpSession + `\"}]"}`,
		`state: {"cookies": [{"Name": "connect.sid", "Value": "` + phpSession + `", "Path": "/"}], "origins": []}`,
		`jar: [{"value": "` + phpSession + `", "name": "JSESSIONID"}]`,
		`[{"name": "auth_token", "value": "` + phpSession + `"}]`,
	} {
		assertMaskedOnce(t, s, in, phpSession)
	}
	m := pcommon.NewMap()
	m.PutStr("name", "sessionid")
	m.PutStr("value", phpSession)
	m.PutStr("domain", ".example.com")
	s.Map(m, &Report{})
	assert.Equal(t, want, m.AsRaw()["value"], "an attribute map")
	assert.Equal(t, "sessionid", m.AsRaw()["name"])
}

// A cookie object whose cookie carries no credential, and an object with a name and a value
// that is no cookie's, keep their values.
func TestCookieObjectsWithoutCredentialsAreKept(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	for _, in := range []string{
		`cookies: [{"name":"theme","value":"dark-mode-enabled-x"},{"name":"sessionid","value":"expired"}]`,
		`cookies: [{'name': 'session', 'value': 'disabled'}]`,
		`options: [{"name": "model", "value": "gpt-4o-mini-2024-07-18"}]`,
	} {
		assert.Equal(t, in, s.Text(in, &Report{}), in)
	}
	m := pcommon.NewMap()
	m.PutStr("name", "gen_ai.request.model")
	m.PutStr("value", "gpt-4o-mini-2024-07-18")
	s.Map(m, &Report{})
	assert.Equal(t, "gpt-4o-mini-2024-07-18", m.AsRaw()["value"])
}

// A cookie object is found whatever its other members hold: an object (the DevTools protocol's
// partitionKey {"topLevelSite": …}, before or after the value), braces in a string (a value
// of RFC 6265's alphabet may hold them, as may any other member), and a "value" member of an
// object inside it is not the cookie's.
func TestCookieObjectsWithObjectsAndBracesInside(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	partition := `"partitionKey":{"topLevelSite":"https://example.com","hasCrossSiteAncestor":false}`
	for _, in := range []string{
		`cookies: [{"name":"sessionid","value":"` + phpSession + `",` + partition + `}]`,
		`cookies: [{"name":"sessionid",` + partition + `,"value":"` + phpSession + `"}]`,
		`cookies: [{"name":"sessionid","value":"` + phpSession + `","meta":{"value":"short"}}]`,
		`cookies: [{"name":"sessionid","value":"` + phpSession + `","sameParty":{}}]`,
		`cookies: [{"name":"sessionid","value":"` + phpSession + `","comment":"{x}"}]`,
		`cookies: [{'name': 'sessionid', 'comment': '}{', 'value': '` + phpSession + `'}]`,
		`state: {"cookies": [{"name": "sessionid", "value": "` + phpSession + `", ` + partition + `}], "origins": [{"origin": "x", "localStorage": []}]}`,
	} {
		assertMaskedOnce(t, s, in, phpSession)
	}
	braced := "ab{" + phpSession + "}"
	assertMaskedOnce(t, s, `cookies: [{"name":"sessionid","value":"`+braced+`"}]`, braced)
}

// Finding cookie objects is one pass over the text, however many braces and quotes it holds:
// 1 MiB in well under a second each (with -race too).
func TestCookieObjectsInLongTextsAreOnePass(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	for _, in := range []string{
		"value " + strings.Repeat("{", 1<<20),
		"value " + strings.Repeat(`{"a":"`, 1<<17),
		"value " + strings.Repeat(`{"name":"x","value":`, 1<<16),
		"value " + strings.Repeat(`{"value"`+"\n", 1<<17),
		"value " + strings.Repeat(`{'\"`, 1<<18),
		"value " + strings.Repeat(`{"name":"x","value":"y"}, `, 1<<15),
		"value " + strings.Repeat(`{"name":"x","value":"y", "a": [`, 1<<15),
		"value " + strings.Repeat("(", 1<<20),
		"value " + strings.Repeat("{", 64) + strings.Repeat(")", 1<<20),
		"value " + strings.Repeat(`(name='x', value='yyyyyyyyyyyy'`, 1<<15),
		"value " + strings.Repeat(`{"a":"\"`+"\n", 1<<17),
		"value {" + strings.Repeat(`"a\"{\"name\":\"sid\",\"value\":\"yyyyyyyyyyyy\"", `, 1<<14),
		"value " + strings.Repeat("(name=x value=", 1<<16),
		"value " + strings.Repeat("(value = ", 1<<17),
		strings.Repeat("jar.set('sid', ", 1<<15),
		"jar.set(" + strings.Repeat(" ", 1<<20) + "'sid'" + strings.Repeat(" ,'x'", 1<<17),
		strings.Repeat("a", 1<<20) + strings.Repeat("jar.set('", 1<<16),
		strings.Repeat("Cookie[name=x value=", 1<<16),
		strings.Repeat("Cookie[", 1<<18) + strings.Repeat("]", 1<<18),
		strings.Repeat("store.put('JSESSIONID', ", 1<<15),
	} {
		quickEnough(t, time.Second, func() { s.cookieObjectSpans(in) }, in[:40])
	}
}

// A JavaScript object literal with unquoted member names (Playwright's and Puppeteer's cookies
// as written in code or logged by Node's util.inspect) is a cookie object as the quoted form is.
func TestCookieObjectsWithUnquotedNames(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	for _, in := range []string{
		`await context.addCookies([{name: "sessionid", value: "` + phpSession + `", domain: ".example.com", path: "/"}])`,
		`[ { name: 'sid', value: '` + phpSession + `', domain: 'example.com', httpOnly: true } ]`,
		`cookies: [{value: '` + phpSession + `', name: 'connect.sid'}]`,
		`{name: "auth_token", partitionKey: {topLevelSite: "https://a.example"}, value: "` + phpSession + `"}`,
	} {
		assertMaskedOnce(t, s, in, phpSession)
	}
	for _, in := range []string{
		`{name: "theme", value: "` + phpSession + `"}`,
		`{username: "sessionid", value: "` + phpSession + `"}`,
		`{name: "sessionid", xvalue: "` + phpSession + `"}`,
	} {
		assert.Equal(t, in, s.Text(in, &Report{}), in)
	}
}

// A cookie written as a keyword call is a cookie object too: Python's repr() of an
// http.cookiejar.Cookie (Lib/http/cookiejar.py, Cookie.__repr__), alone or in a CookieJar's or
// requests' RequestsCookieJar's repr, and the same call in code. str() of the jar
// (<Cookie sessionid=… for …>) is a name=value cookie (cookies.go).
func TestCookieKeywordCallsAreMasked(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	repr := func(name, value string) string {
		return "Cookie(version=0, name='" + name + "', value='" + value + "', port=None, port_specified=False, " +
			"domain='.example.com', domain_specified=True, domain_initial_dot=True, path='/', path_specified=True, " +
			"secure=False, expires=None, discard=True, comment=None, comment_url=None, rest={'HttpOnly': None}, rfc2109=False)"
	}
	for _, in := range []string{
		repr("sessionid", phpSession),
		"DEBUG jar=<RequestsCookieJar[" + repr("_ga", "GA1.1.1234567890.1733400000") + ", " + repr("sessionid", phpSession) + "]>",
		"<CookieJar[" + repr("auth_token", phpSession) + "]>",
		"<RequestsCookieJar[<Cookie sessionid=" + phpSession + " for .example.com/>]>",
		`jar.set_cookie(create_cookie(name="sid", value="` + phpSession + `", domain="example.com"))`,
		`http.cookiejar.Cookie(value = '` + phpSession + `', name = 'connect.sid')`,
	} {
		assertMaskedOnce(t, s, in, phpSession)
	}
	for _, in := range []string{
		repr("theme", "dark-mode-enabled-x"),
		repr("sessionid", "expired"),
		`Option(name="model", value="gpt-4o-mini-2024-07-18")`,
		`if (c.name == "sessionid" && c.value == "` + phpSession + `") {}`,
	} {
		assert.Equal(t, in, s.Text(in, &Report{}), in)
	}
}

// A cookie object cut before its closing brace or parenthesis, or inside its value (an
// attribute or a log line cut at an instrumentation's length limit), still has its value
// masked: what is left of the value, to where the cookie-value alphabet ends.
func TestCutCookieObjectsAreMasked(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	for in, secret := range map[string]string{
		`INFO saved cookies [{"name":"sessionid","value":"` + phpSession + `","domain":".exa`: phpSession,
		`INFO saved cookies [{"name":"sessionid","value":"` + phpSession + `"`:                phpSession,
		`INFO saved cookies [{"name": "sessionid", "value": "` + phpSession:                   phpSession,
		`INFO saved cookies [{"name": "sessionid", "value": "` + phpSession[:12]:              phpSession[:12],
		`[{"name": "sessionid", "value": "` + phpSession[:20] + "…\nINFO next line":           phpSession[:20],
		`[{name: 'sid', value: '` + phpSession + "\n" + `{name: "theme", value: "dark"}`:      phpSession,
		"Cookie(version=0, name='sessionid', value='" + phpSession:                            phpSession,
	} {
		assertMaskedOnce(t, s, in, secret)
	}
	for _, in := range []string{
		`[{"name": "sessionid", "value": "expire`,
		`[{"name": "theme", "value": "` + phpSession,
		`[{"value": "` + phpSession, // the name is not known
	} {
		assert.Equal(t, in, s.Text(in, &Report{}), in)
	}
}

// JSON written in a string of an object that is not JSON as a whole (a tool result in a log
// line, a span attribute cut at its length limit) has its cookie objects read with its escapes
// decoded: in the text decoded as a whole, the quotes of the string around them are quotes like
// theirs, and their members were taken for text between strings.
func TestCookieObjectsInJSONStringsInText(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	for _, in := range []string{
		`INFO tool {"content": "[{\"name\":\"sessionid\",\"value\":\"` + phpSession + `\"}]"} done`,
		`{"role": "tool", "content": "[{\"name\": \"sessionid\", \"value\": \"` + phpSession + `\", \"domain\": \".example.com\"}, {\"name\": \"the`,
		`{"role": "tool", "content": "[{\"name\": \"sessionid\", \"value\": \"` + phpSession,
		`{"tool_result": "cookies: [{\"name\": \"PHPSESSID\", \"value\": \"` + phpSession + `\"`,
		`{"a": "{\"b\": \"[{\\\"name\\\": \\\"sessionid\\\", \\\"value\\\": \\\"` + phpSession,
	} {
		assertMaskedOnce(t, s, in, phpSession)
	}
	for _, in := range []string{
		`INFO tool {"content": "[{\"name\":\"theme\",\"value\":\"` + phpSession + `\"}]"} done`,
		`{"role": "user", "content": "say \"hi\" to {name}", "value": "x`,
	} {
		assert.Equal(t, in, s.Text(in, &Report{}), in)
	}
}

// A jar written as a map from cookie names to values under a name of cookies (requests'
// cookies={'sessionid': '…'}, {"cookies": {"sessionid": "…"}}) has each member read as the
// cookie name=value, in JSON, in text and in an attribute map (a log body), with one
// placeholder; an express-session cookie's options under "cookie" stay.
func TestCookieJarsWrittenAsMapsAreMasked(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	for _, in := range []string{
		`{"cookies": {"sessionid": "` + phpSession + `", "theme": "dark"}}`,
		`requests.get(url, cookies={'sessionid': '` + phpSession + `', 'lang': 'en'})`,
		`cookies = {"lang": "en", "visits": 3, "PHPSESSID": "` + phpSession + `"}`,
		`DEBUG request {"url": "https://example.com/", "cookies": {"connect.sid": "` + phpSession + `"}} sent`,
		`{"request": {"cookies": {"auth_token": "` + phpSession + `"}}, "response": {"status": 200}}`,
	} {
		assertMaskedOnce(t, s, in, phpSession)
	}
	m := pcommon.NewMap()
	jar := m.PutEmptyMap("cookies")
	jar.PutStr("sessionid", phpSession)
	jar.PutStr("theme", "dark")
	s.Map(m, &Report{})
	assert.Equal(t, map[string]any{"cookies": map[string]any{"sessionid": s.placeholder(KindSecretField, phpSession), "theme": "dark"}}, m.AsRaw())
	for _, in := range []string{
		`{"cookie": {"path": "/", "httpOnly": true, "maxAge": 86400000, "sameSite": "lax"}, "sessionId": "` + phpSession + `"}`,
		`app.use(session({cookie: {secure: true, sameSite: 'lax'}}))`,
		`cookies={'theme': 'dark-mode-enabled-x', 'sessionid': 'expired'}`,
	} {
		assert.Equal(t, in, s.Text(in, &Report{}), in)
	}
}

// Go's %+v of an http.Cookie (net/http's struct, as fmt writes it: fields unquoted, a slice of
// them, a pointer to a copy of the type without its String method) has the value of its
// session cookie masked, to the space before the next field or the closing brace; a cookie
// that carries no credential keeps its value.
func TestGoCookieStructsAreMasked(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	c := http.Cookie{Name: "sessionid", Value: phpSession, Path: "/", HttpOnly: true}
	type cookie http.Cookie // no String method: fmt writes &{…}
	for _, in := range []string{
		fmt.Sprintf("%+v", c),
		fmt.Sprintf("cookies: %+v", []http.Cookie{{Name: "theme", Value: "dark-mode-enabled-x"}, c}),
		fmt.Sprintf("set %+v", &cookie{Name: "auth_token", Value: phpSession}),
		fmt.Sprintf("%+v", struct{ Name, Value string }{"JSESSIONID", phpSession}),
	} {
		assertMaskedOnce(t, s, in, phpSession)
		assert.Contains(t, s.Text(in, &Report{}), "Value:<secret:", in)
	}
	kept := fmt.Sprintf("%+v", []http.Cookie{{Name: "theme", Value: "dark-mode-enabled-x"}, {Name: "sessionid"}})
	assert.Equal(t, kept, s.Text(kept, &Report{}))
}

// A jar written as a map from cookie names to values is found also with its member names
// unquoted (a JavaScript object literal, a YAML flow mapping: cookies: {sessionid: '…'}) and
// after requests' get_dict(), the call that makes one, under no name of cookies (a log line
// `get_dict() = {'sessionid': '…'}`). A map after another call, and the options of a cookie
// written so, keep their values.
func TestCookieJarsWithUnquotedNamesOrFromGetDictAreMasked(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	for _, in := range []string{
		`cookies: {sessionid: '` + phpSession + `', theme: 'dark'}`,
		`cookies: {lang: en, visits: 3, "connect.sid": "` + phpSession + `"}`,
		`cookies = {lang: "en", PHPSESSID: "` + phpSession + `"}`,
		`DEBUG jar.get_dict() = {'sessionid': '` + phpSession + `', 'lang': 'en'}`,
		`get_dict()={"PHPSESSID": "` + phpSession + `"}`,
	} {
		assertMaskedOnce(t, s, in, phpSession)
	}
	for _, in := range []string{
		`app.use(session({cookie: {secure: true, sameSite: 'lax', maxAge: 86400000}}))`,
		`cookies: {theme: 'dark-mode-enabled-x', sessionid: 'expired'}`,
		`cookies = {k: v for k, v in pairs}`,
		`config.to_dict() = {'sessionid': '` + phpSession + `'}`,
		`get_dict() = {'session_timeout': '3600000000'}`,
	} {
		assert.Equal(t, in, s.Text(in, &Report{}), in)
	}
}

// A cookie's toString that writes its fields unquoted, name=value in parentheses or braces (a
// Kotlin data class, Lombok's @ToString, Guava's toStringHelper), is a cookie object too: its
// value is masked to the ',', ')', '}' or space after it. OkHttp's Cookie.toString() is the
// Set-Cookie form (cookies.go). An unquoted value after a quoted name is a variable in code.
func TestCookieToStringWithUnquotedValuesIsMasked(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	for _, in := range []string{
		"Cookie(name=sessionid, value=" + phpSession + ", expiresAt=253402300799999, domain=example.com, path=/, secure=true, httpOnly=true, persistent=false, hostOnly=true)",
		"SessionCookie{name=JSESSIONID, value=" + phpSession + "}",
		"[Cookie(name=theme, value=dark), Cookie(name=connect.sid, value=" + phpSession + ")]",
		"Cookie(value=" + phpSession + ", name=sid)",
		"Cookie(name = auth_token, value = " + phpSession + " )",
		"sessionid=" + phpSession + "; path=/; domain=example.com", // OkHttp
		// A Java record's toString: Cookie[name=…, value=…], the brackets after a Cookie type.
		"Cookie[name=sessionid, value=" + phpSession + ", domain=example.com]",
		"[Cookie[name=theme, value=dark], SessionCookie[name=JSESSIONID, value=" + phpSession + "]]",
		"Cookie[value=" + phpSession + ", name=sid]",
		"cookies=[Cookie[name=sessionid, value=" + phpSession + "]]", // not a list of two words
		"cookie=Cookie[name=sessionid, value=" + phpSession + "]",
	} {
		assertMaskedOnce(t, s, in, phpSession)
	}
	for _, in := range []string{
		"Cookie(name=theme, value=dark)",
		"Cookie(name=theme, value=" + phpSession + ")",
		"Cookie(name=sessionid, value=expired)",
		"Cookie(name=sessionid, value=)",
		`create_cookie(name="sessionid", value=sessionKeyValue)`,
		"Option(name=model, value=gpt-4o-mini-2024-07-18)",
		"if (name == sessionid && value == " + phpSession + ")",
		"Cookie[name=theme, value=" + phpSession + "]",
		"Cookie[name=sessionid, value=expired]",
		"Option[name=sessionid, value=" + phpSession + "]", // a record of no cookie
		"[name=sessionid, value=" + phpSession + "]",       // a list
	} {
		assert.Equal(t, in, s.Text(in, &Report{}), in)
	}
}

// A call that sets a cookie with its name and value as its first two arguments (a jar's or a
// cookie store's set, Django's set_cookie, Express's res.cookie, PHP's setcookie, Java's
// new Cookie) is the cookie name=value: the value is masked when the name is a session
// cookie's or a secret name. Other calls, and other arguments, keep their strings.
func TestCookieSetterArgumentsAreMasked(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	for _, in := range []string{
		`jar.set('sessionid', '` + phpSession + `')`,
		`session.cookies.set("sessionid", "` + phpSession + `", domain="example.com")`,
		`response.set_cookie('sessionid', '` + phpSession + `', httponly=True)`,
		`response.set_cookie('sessionid', value='` + phpSession + `')`,
		`res.cookie('connect.sid', '` + phpSession + `', { httpOnly: true })`,
		`setcookie("PHPSESSID", "` + phpSession + `");`,
		`resp.addCookie(new Cookie("JSESSIONID", "` + phpSession + `"));`,
		`await cookieStore.set( 'sid' ,` + "\n" + `  '` + phpSession + `' )`,
		`jar.set('auth_token', '` + phpSession + `')`,
		`{"code": "cookies.set(\"sessionid\", \"` + phpSession + `\")"} x`,
		`response.set_cookie(key='sessionid', value='` + phpSession + `', max_age=3600)`, // Django's keywords
		`response.set_cookie(value="` + phpSession + `", key="sessionid")`,
		// Any call that sets, when its first argument is a name only a session cookie has.
		`session.set('sessionid', '` + phpSession + `')`,
		`store.put("JSESSIONID", "` + phpSession + `")`,
		`localStorage.setItem('PHPSESSID', '` + phpSession + `')`,
		`ctx.set('connect.sid', '` + phpSession + `')`,
		`headers.add("ASP.NET_SessionId", "` + phpSession + `")`,
	} {
		assertMaskedOnce(t, s, in, phpSession)
	}
	for _, in := range []string{
		`set('color', 'blue')`,
		`jar.set('theme', '` + phpSession + `')`,
		`jar.set('sessionid', 'expired')`,
		`cache.set('session', '` + phpSession + `')`,
		`text.replace('sid', 'identifier')`,
		`jar.set(name, '` + phpSession + `')`,
		`jar.set('x', 'sessionid', '` + phpSession + `')`,
		`jar.set('sessionid' + '` + phpSession + `')`,
		`jar.get('sessionid') or '` + phpSession + `'`,
		`cache.set(key='sessionid', value='` + phpSession + `')`,
		`response.set_cookie(key='theme', value='` + phpSession + `')`,
		`{"key": "sessionid", "value": "` + phpSession + `"}`,
		`get('sessionid')`,
		`config.get('sessionid', 'not-logged-in')`, // a getter's default
		`set('session_id', 'run-42')`,              // an agent's session id, which groups telemetry
		`set('session_id', '` + phpSession + `')`,
		`span.set_attribute('sessionId', '` + phpSession + `')`,
		`redis.set('user_session', '` + phpSession + `')`,
		`Set it (see 'sessionid', '` + phpSession + `').`,
	} {
		assert.Equal(t, in, s.Text(in, &Report{}), in)
	}
}
