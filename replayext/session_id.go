package replayext

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"strings"
)

const (
	headerSession = "X-Replay-Session"
	// maxSessionIDLength bounds a client-chosen session id, which is kept in memory.
	maxSessionIDLength = 128
)

// sessionOf names the replay session of a request: the X-Replay-Session header, else the
// trace id of the W3C traceparent header (an instrumented agent sends one per run), else a
// fresh random id that nobody else can hold. The caller returns a fresh id in the
// X-Replay-Session response header so that the client can continue the same session.
func sessionOf(req *http.Request) (id string, fresh bool) {
	if s := req.Header.Get(headerSession); s != "" {
		if len(s) > maxSessionIDLength {
			s = s[:maxSessionIDLength]
		}
		return s, false
	}
	if tp := strings.Split(req.Header.Get("traceparent"), "-"); len(tp) == 4 && len(tp[1]) == 32 && tp[1] != strings.Repeat("0", 32) {
		return tp[1], false
	}
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand panics rather than return an error)
	return hex.EncodeToString(b[:]), true
}
