package scrub

import (
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
