package scrub

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/pcommon"
)

const (
	flaskSession = "eyJ1c2VyX2lkIjo0Mn0.ZkT3bQ.Xq9vR2mLw8sT1yUe4HcJb6NpA0k"
	phpSession   = "9k2mq7d1v4b8c3n6x5z0p1l2s7"
	railsSession = "Q1w2E3r4T5y6U7i8O9p0AbCdEfGhIjKlMnOpQrSt--3f9a1c0b2d4e"
)

// A session cookie's value is a bearer credential under a name that is no secret name
// (session, sid, PHPSESSID, connect.sid, _myapp_session …). Written as a cookie, name=value,
// a value of 8 characters or more in any letter case is masked under a session cookie's name
// anywhere in text, and a credential-shaped value under any name when cookie attributes follow it (a Set-Cookie value whose header name is not
// in front of it: a header list, a log line).
func TestSessionCookiesAreMasked(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	for _, tc := range []struct{ in, secret string }{
		{"the response set a cookie session=" + flaskSession + " in the browser", flaskSession},
		{"curl -b 'PHPSESSID=" + phpSession + "' https://x/admin", phpSession},
		{"curl --cookie \"sid=" + phpSession + "; theme=dark\" https://x", phpSession},
		{"jar = dict(sessionid=" + phpSession + ")", phpSession},
		{"JSESSIONID=8F3A9C1B2D4E5F60718293A4B5C6D7E8", "8F3A9C1B2D4E5F60718293A4B5C6D7E8"},
		{"connect.sid=s%3AQ1w2E3r4T5y6U7i8O9p0.AbCdEfGhIjKlMnOp", "s%3AQ1w2E3r4T5y6U7i8O9p0.AbCdEfGhIjKlMnOp"},
		{"cookie jar: _myapp_session=" + railsSession + ", ok", railsSession},
		{"ASP.NET_SessionId=" + phpSession + "; path=/", phpSession},
		{"ASPSESSIONIDQQGGGNCG=" + phpSession, phpSession},
		{"__Host-session=" + flaskSession, flaskSession},
		{`[["set-cookie", "remember=` + railsSession + `; Path=/; HttpOnly"]]`, railsSession},
		{"prefs=" + railsSession + "; Expires=Wed, 21 Oct 2026 07:28:00 GMT; Secure", railsSession},
		{"x=" + railsSession + ";samesite=Lax", railsSession},
		{"sessionid=abcdefghij", "abcdefghij"},
		{"curl -b 'PHPSESSID=k3j4h5g6' https://x/admin", "k3j4h5g6"},
		{"session=verylongplainwords", "verylongplainwords"},
		{"the log said connect.sid=ABCDEFGHIJKL", "ABCDEFGHIJKL"},
		{"JSESSIONID=Zabcdefgh; theme=dark", "Zabcdefgh"},
	} {
		assertMaskedOnce(t, s, tc.in, tc.secret)
	}
}

// A session cookie's value in quotes after its name (Python's repr() of an http.cookies
// SimpleCookie, BaseCookie.__repr__ in CPython's Lib/http/cookies.py: <SimpleCookie:
// sessionid='…'>; a keyword argument, dict(sessionid='…')) is masked as the unquoted one is,
// with its placeholder.
func TestQuotedSessionCookieValuesAreMasked(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	for _, in := range []string{
		"<SimpleCookie: lang='en' sessionid='" + phpSession + "'>",
		"requests.get(url, cookies=dict(sessionid='" + phpSession + "'))",
		`session.cookies.update(dict(PHPSESSID="` + phpSession + `"))`,
		"<SimpleCookie: sessionid='" + phpSession + "'>",
		`Cookie: sid="` + phpSession + `"; theme=dark`,
	} {
		assertMaskedOnce(t, s, in, phpSession)
		// Only the value: the names, and the other cookies, stay as written.
		want := strings.ReplaceAll(in, phpSession, s.placeholder(KindSecretField, phpSession))
		assert.Equal(t, want, s.Text(in, &Report{}), in)
	}
	// A quote that closes the string the header is in opens no cookie's value: the value
	// before it, base64 padding and all, is still the header's.
	assert.NotContains(t, s.Text(`log "x Cookie: YWJjZGVmZ2hpamtsbW5v=", "y"`, &Report{}), "YWJjZGVmZ2hpamtsbW5v")
	for _, in := range []string{
		"f(sessionid='expired', sid=\"disabled\")",
		`connect(session="db_session")`,
		`<input name="sessionid" value="">`,
		`sessionid="` + phpSession, // no closing quote on its line
	} {
		assert.Equal(t, in, s.Text(in, &Report{}), in)
	}
}

// What a cookie that carries no credential keeps: a short or plain value, a word that describes
// (session=disabled) or code (session=db_session) under a session cookie's name, a value without
// a digit and in one letter case under another name, a name that is no session cookie's without
// cookie attributes,
// a session id under a name written as JSON or an attribute (session.id, sessionId: ids that
// group telemetry), and the attributes of a cookie.
func TestPlainCookiesAndSessionIDsAreKept(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	for _, in := range []string{
		"theme=dark; lang=en; Path=/; SameSite=Lax",
		"session=expired",
		"sid=42",
		"session=disabled",
		"session=anonymous",
		"sessionid=Required",
		"sid=abcdefg",
		"prefs=abcdefghij",
		"connect(session=db_session)",
		"handler(session=self.session, sid=get_sid())",
		"ssid=HomeNetwork2026wifi",
		"inside=" + phpSession,
		"commit=" + phpSession + " branch=main",
		`{"session.id": "` + phpSession + `", "sessionId": "` + flaskSession + `"}`,
		"Expires=Wed, 21 Oct 2026 07:28:00 GMT; Max-Age=3600; Domain=example.com; HttpOnly",
		"a == b && sid == " + phpSession,
	} {
		assert.Equal(t, in, s.Text(in, &Report{}), in)
	}
	m := pcommon.NewMap()
	m.PutStr("session.id", phpSession)
	m.PutStr("gen_ai.conversation.id", flaskSession)
	s.Map(m, &Report{})
	assert.Equal(t, map[string]any{"session.id": phpSession, "gen_ai.conversation.id": flaskSession}, m.AsRaw())
}

// After a Cookie or Set-Cookie header name, the value is masked to the end of the header when
// the header opens its line or a quoted string: a Set-Cookie value joined with ", " (as HTTP
// clients join repeated headers) or with an Expires date holds every cookie after the first.
func TestCookieHeadersAreMaskedToTheirEnd(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	joined := "theme=dark; Path=/, sid=" + phpSession + "; Path=/; HttpOnly"
	dated := "lang=en; Expires=Wed, 21 Oct 2026 07:28:00 GMT, token2=" + railsSession + "; Secure"
	for _, tc := range []struct{ in, value string }{
		{"HTTP/1.1 200 OK\r\nSet-Cookie: " + joined + "\r\nContent-Type: text/html", joined},
		{"Set-Cookie: " + dated + "  \n", dated},
		{`curl -H "Cookie: a=1, sid=` + phpSession + `" https://x`, "a=1, sid=" + phpSession},
		{`said {\"h\": \"Set-Cookie: ` + joined + `\"} ok`, joined},
	} {
		var r Report
		out := s.Text(tc.in, &r)
		assert.NotContains(t, out, phpSession, tc.in)
		assert.NotContains(t, out, railsSession, tc.in)
		assert.Contains(t, out, s.placeholder(KindSecretField, tc.value), tc.in)
		assert.Equal(t, out, s.Text(out, &Report{}), "idempotent: %q", tc.in)
	}
	// In prose a header name takes its cookies, not the sentence after them.
	out := s.Text("I sent Cookie: a=1; b=2 and got a 401 back", &Report{})
	assert.True(t, strings.HasSuffix(out, "> and got a 401 back"), out)
}
