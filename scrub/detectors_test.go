package scrub

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// A card number is found when the greedy match takes in digits beside it (an expiry date, a
// quantity, a field before it): the match fails the checksum, and the card inside it is taken.
func TestCardNumberBesideOtherDigits(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	for _, tc := range []struct{ in, keep string }{
		{"card 4111 1111 1111 1111 12/27 cvc", "12/27 cvc"},
		{"card 5555-5555-5555-4444 09 28", "09 28"},
		{"order 3 4111111111111111", "order 3 "},
		{`{"000000000"4111111111111111 0@0.AA`, `{"000000000"`}, // found by FuzzText
	} {
		var r Report
		out := s.Text(tc.in, &r)
		assert.NotContains(t, out, "1111 1111", tc.in)
		assert.NotContains(t, out, "111111111111", tc.in)
		assert.NotContains(t, out, "5555-4444", tc.in)
		assert.Contains(t, out, tc.keep, tc.in)
		assert.Equal(t, int64(1), r.Counts["payment_card"], tc.in)
		assert.Equal(t, out, s.Text(out, &Report{}), "idempotent: %q", tc.in)
	}
	for _, in := range []string{
		"0000 0000 0000 0000 1",     // no card starts with 0
		"ref 4111 1111 1111 1112 3", // no part passes the checksum
	} {
		assert.Equal(t, in, s.Text(in, &Report{}), in)
	}
}

// An IPv6 address ends with a hex group or "::": one colon after it (prose, a log line, a port
// without brackets) was taken into the match, which then failed the parse and was lost.
func TestIPv6AddressBeforeAColon(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	for _, in := range []string{"from 2001:db8:85a3::8a2e:370:7334: refused", "peer=2001:db8::1:", "2001:db8:85a3:0:0:8a2e:370:7334:443",
		"fe80::1ff:fe23:4567:890a: up"} {
		out := s.Text(in, &Report{})
		assert.NotContains(t, out, "2001:db8", in)
		assert.NotContains(t, out, "fe80::1ff", in)
		assert.Contains(t, out, "<secret:ip_address:", in)
	}
	for _, in := range []string{"::1: loopback", `"::ffff:" + ipv4`, "at 12:30:45: done", "std::vector<int>::iterator"} {
		assert.Equal(t, in, s.Text(in, &Report{}), "not an address that points at a host")
	}
}
