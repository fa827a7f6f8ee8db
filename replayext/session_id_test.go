package replayext

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestTraceIDOfTraceparent(t *testing.T) {
	const id = "4bf92f3577b34da6a3ce929d0e0e4736"
	for tp, want := range map[string]string{
		"00-" + id + "-00f067aa0ba902b7-01":                       id,
		"00-00000000000000000000000000000000-00f067aa0ba902b7-01": "", // invalid: all zeros
		"00-" + id + "-00f067aa0ba902b7":                          "", // three fields
		"00-" + id + "-00f067aa0ba902b7-01-extra":                 "", // five fields
		"00-" + id[:31] + "-00f067aa0ba902b7-01":                  "", // short trace id
		"":                                                        "",
	} {
		got, ok := traceIDOf(tp)
		assert.Equal(t, want, got, tp)
		assert.Equal(t, want != "", ok, tp)
	}
}

// A long session id is kept whole (as its digest): two ids sharing their first bytes are two
// sessions, and the divergence log finds the session under the id the client sent.
func TestLongSessionIDsStayDistinct(t *testing.T) {
	long := strings.Repeat("s", maxSessionIDLength)
	a, b := clientSession(long+"a"), clientSession(long+"b")
	assert.NotEqual(t, a, b)
	assert.LessOrEqual(t, len(a), maxSessionIDLength)
	assert.Equal(t, long, clientSession(long))
	req := httptest.NewRequest("POST", "/", nil)
	req.Header.Set(headerSession, long+"a")
	id, fresh := sessionOf(req)
	assert.False(t, fresh)
	assert.Equal(t, a, id)
}
