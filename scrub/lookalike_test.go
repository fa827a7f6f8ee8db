package scrub

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Numbers and addresses written with characters that read as spaces, hyphens, digits or
// nothing are found as their ASCII forms are, and masked in the bytes written.
func TestLookalikeCharactersHideNothing(t *testing.T) {
	s := newScrubber(t, Config{Enabled: true, Key: "k"})
	for _, tc := range []struct{ in, secret, kind string }{
		{"appelez le 06\u00a012\u00a034\u00a056\u00a078 demain", "\u00a034\u00a056\u00a078", "phone_number"},
		{"carte 4111\u202f1111\u202f1111\u202f1111 ok", "1111\u202f1111", "payment_card"},
		{"card 4111\u20131111\u20131111\u20131111", "1111\u20131111", "payment_card"},
		{"電話は０９０－１２３４－５６７８です", "１２３４－５６７８", "phone_number"},
		{"call +1\u00a0(415)\u00a0555\u20110132", "555\u20110132", "phone_number"},
		{"mail alice\u200b@example.com", "@example.com", "email"},
		{"mail ali\u00adce@exam\u00adple.com", "ple.com", "email"},
		{"mail alice＠example.com", "example.com", "email"},
		{"ssn 078\u201105\u20111120", "05\u20111120", "us_ssn"},
	} {
		var r Report
		out := s.Text(tc.in, &r)
		assert.NotContains(t, out, tc.secret, tc.in)
		assert.Equal(t, map[string]int64{tc.kind: 1}, r.Counts, tc.in)
		assert.Equal(t, out, s.Text(out, &Report{}), "idempotent")
	}
	for _, in := range []string{"Prix\u00a0: 12\u00a0€", "１２３", "a\u2013b", "year 2024\u20132025"} {
		assert.Equal(t, in, s.Text(in, &Report{}), "nothing to find")
	}
}
