package scrub

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Inputs FuzzText found that had one placeholder on the first pass and another on the second
// (testdata/fuzz/FuzzText/idem-*): a finding cut where a letter or digit touched it (an
// address's domain before a digit, an IPv6 address before a hex digit), a finding after which
// the search went on past what became its placeholder (a phone number inside a longer run of
// digit groups), a query parameter skipped inside the value before it, and an IBAN whose digits
// were counted in the text, the placeholder's included, and a session cookie's value judged
// with a value in it that became a placeholder. Each is now judged
// on the first pass as the second pass judges it; what must stay as it is stays.
func TestScrubbingTwiceChangesNothing(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	for _, tc := range []struct {
		in, want string
		counts   map[string]int64
	}{
		// "8@7.BY1" is no address (a digit after the domain); "7.BY1@7.BY", after the '@', is.
		{in: "8@7.BY1@7.BY", want: "8@<secret:email:", counts: map[string]int64{"email": 1}},
		{in: "0@2.AA000010@2.AA", want: "0@<secret:email:", counts: map[string]int64{"email": 1}},
		// Neither "3::a2ea" (a 3 after it) nor "3::" (an a before it) is an address.
		{in: "3::a2ea3::", want: "3::a2ea3::"},
		// Both numbers are found on the first pass: "07.004001114" and "020000 1001".
		{in: "07.004001114.2.020000 1001", want: "<secret:phone_number:", counts: map[string]int64{"phone_number": 2}},
		// An IBAN's checksum by chance, with 4 digits: the placeholder's digits made up the 10.
		{in: "Nx81NNNNNNx81secret:B", want: "Nx81NNNNNNx81secret:<secret:secret_field:", counts: map[string]int64{"secret_field": 1}},
		// A session cookie's value that is code up to a pair whose value is masked.
		{in: "sid=0seCret:f(x) sid=0seCret:\x10", want: "sid=0seCret:<secret:secret_field:", counts: map[string]int64{"secret_field": 2}},
		{in: "&apikey=000000000000&api.key=0", want: "&apikey=<secret:secret_field:", counts: map[string]int64{"secret_field": 2}},
	} {
		var r Report
		once := s.Text(tc.in, &r)
		assert.Contains(t, once, tc.want, tc.in)
		assert.Equal(t, tc.counts, r.Counts, "%s: %q", tc.in, once)
		assert.Equal(t, once, s.Text(once, &Report{}), "idempotent: %s", tc.in)
	}
	// What the end boundaries keep: an address before punctuation, another address, a ':', a
	// fragment; one in any script; the next parameter after a query value.
	for in, want := range map[string]string{
		"mail a@b.co,c@d.co.":                "mail <secret:email:X>,<secret:email:X>.",
		"x@例え.テスト, fe80::1%eth0":             "<secret:email:X>, <secret:ip_address:X>%eth0",
		"[2001:db8::1]:80 2001:db8:8000:: x": "[<secret:ip_address:X>]:80 <secret:ip_address:X> x",
		"GET /?api_key=abc123&page=2#top":    "GET /?api_key=<secret:secret_field:X>&page=2#top",
	} {
		assert.Equal(t, want, placeholderPattern.ReplaceAllString(s.Text(in, &Report{}), "<secret:$1:X>"), in)
	}
}
