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
	id, fresh := sessionOf(req, "")
	assert.False(t, fresh)
	assert.Equal(t, a, id)
}

// sessions.default_id names the session of a request that names none; a header or a
// traceparent still wins, and without it such a request is a fresh session of its own.
func TestDefaultSessionOfRequestsThatNameNone(t *testing.T) {
	bare := httptest.NewRequest("POST", "/", nil)
	id, fresh := sessionOf(bare, "run-1")
	assert.Equal(t, "run-1", id)
	assert.False(t, fresh, "the client need not be told a session it did not choose")
	id, fresh = sessionOf(bare, "")
	assert.True(t, fresh)
	assert.NotEqual(t, "run-1", id)

	traced := httptest.NewRequest("POST", "/", nil)
	traced.Header.Set("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
	id, _ = sessionOf(traced, "run-1")
	assert.Equal(t, "0af7651916cd43dd8448eb211c80319c", id)
	traced.Header.Set(headerSession, "mine")
	id, _ = sessionOf(traced, "run-1")
	assert.Equal(t, "mine", id)
}
