package scrub

import (
	"strings"
	"testing"

	"github.com/reprise-dev/reprise/scrub/scrubtest"
)

// FuzzText: scrubbing never panics, is idempotent (scrubbed text scrubs to itself), and a
// planted credential added to any text does not survive.
// Run: go test -run '^$' -fuzz FuzzText -fuzztime 30s ./scrub/
func FuzzText(f *testing.F) {
	for _, p := range scrubtest.Planted {
		f.Add(p.Text)
	}
	f.Add(`{"password":"x","n":4111111111111111,"a@b.co":[1,2]}`)
	f.Add("host=db password=pw dbname=x ?api_key=abc&x=1")
	f.Add("Set-Cookie: a=1; Expires=Wed, 21 Oct 2026 07:28:00 GMT, sid=9k2mq7d1v4b8c3n6x5z0; Path=/\nsecret: x,user=bob.")
	f.Add("client_key = \"\"\"Zk2Wq9Lm3Xr7\nTb1\"\"\" x='''y''' password = r'''a\nb'''")
	f.Add(`[{name: "sessionid", value: "9k2mq7d1v4b8c3n6x5z0"}, {value: 'x', name: 'sid'}]`)
	f.Add("response.set_cookie(key='sessionid', value='9k2mq7d1v4b8c3n6x5z0') cache.set(key=\"sid\", value=\"9k2mq7d1v4b8c3n6x5z0\") set_cookie(key=")
	f.Add("signing_key: " + strings.Repeat(strings.Repeat("MIIB", 16)+"\n", 20) + "QUJD==")
	f.Add("tls:\n  ssh_key: |\n    " + strings.Repeat(strings.Repeat("MIIB", 16)+"\n    ", 20) + "QUJD==\n  signing_key: '" + strings.Repeat(strings.Repeat("MIIB", 19)+"\n   ", 16) + "'")
	f.Add("signing_key = (\n    \"" + strings.Repeat(strings.Repeat("MIIB", 16)+"\"\n    \"", 20) + "QUJD==\"\n)\nsign(\n  '" + strings.Repeat("MIIB", 19) + "'\n)")
	f.Add(`log {"code": "client_key = \"\"\"` + strings.Repeat(strings.Repeat("MIIB", 16)+`\n`, 20) + `\"\"\"\n", "key": "\\\"\\\"\\\"x`)
	f.Add("password = (  # x\n    'hunter2-but'\n    r\"-longer\"\n)\nDB_PASSWORD = (\"s3cr3t\" \"more\") token=(\"cut")
	f.Add("[{Name:sessionid Value:9k2mq7d1v4b8c3n6x5z0 Quoted:false Path:/ Domain: Raw: Unparsed:[]} &{Name:sid Value:x y}]")
	f.Add(`password = ("hunter2-a", 'b' "c",  # x` + "\n" + ` None) cookies: {sessionid: '9k2mq7d1v4b8c3n6x5z0', theme: 'dark'}`)
	f.Add(`jar.get_dict() = {'sessionid': '9k2mq7d1v4b8c3n6x5z0', "x": 3} get_dict()={a: "b"`)
	f.Add("Cookie(name=sessionid, value=9k2mq7d1v4b8c3n6x5z0, domain=x) SessionCookie{name = sid, value = 9k2mq7d1v4b8c3n6x5z0}")
	f.Add("jar.set('sessionid', '9k2mq7d1v4b8c3n6x5z0') res.cookie( \"sid\" ,\n \"9k2mq7d1v4b8c3n6x5z0\", {}) cookies.get('sid', 'x') setcookie(\"sid\", value=")
	f.Add("signing_key: " + strings.Repeat(strings.Repeat("MIIB", 16)+" \t\n\n", 20) + "QUJD== x\nssh_key=\"" + strings.Repeat(strings.Repeat("MIIB", 19)+`  \r\n`, 16) + `\r\n  \r\nQUJD\"`)
	f.Add("[Cookie[name=sessionid, value=9k2mq7d1v4b8c3n6x5z0, domain=x], Cookie[value=y (z], SessionCookie[name=sid, value=9k2mq7d1v4b8c3n6x5z0)]] Cookie[")
	f.Add("session.set('sessionid', '9k2mq7d1v4b8c3n6x5z0') store.put(\"JSESSIONID\", \"9k2mq7d1v4b8c3n6x5z0\") set('session_id', 'run-42') get('sessionid')")
	f.Add("<SimpleCookie: lang='en' sessionid='9k2mq7d1v4b8c3n6x5z0'> Cookie: sid=\"9k2mq7d1v4b8c3n6x5z0\"; theme=dark")
	s := newScrubber(f, Config{Enabled: true, Key: "fuzz"})
	planted := scrubtest.Planted[0].Text // an OpenAI key
	f.Fuzz(func(t *testing.T, in string) {
		once := s.Text(in, &Report{})
		if twice := s.Text(once, &Report{}); twice != once {
			t.Fatalf("not idempotent:\n in: %q\n 1st: %q\n 2nd: %q", in, once, twice)
		}
		with := s.Text(in+" "+planted+" ", &Report{})
		if strings.Contains(with, planted) {
			t.Fatalf("planted key survived in %q", with)
		}
	})
}
