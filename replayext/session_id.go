package replayext

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
)

const (
	headerSession = "X-Replay-Session"
	// maxSessionIDLength bounds a client-chosen session id kept in memory as it is; longer ones
	// are kept as their digest.
	maxSessionIDLength = 128
)

// sessionOf names the replay session of a request: the X-Replay-Session header, else the
// trace id of the W3C traceparent header (an instrumented agent sends one per run), else
// sessions.default_id when set, else a fresh random id that nobody else can hold. The caller
// returns a fresh id in the X-Replay-Session response header so that the client can continue
// the same session.
func (r *replay) sessionOf(req *http.Request) (id string, fresh bool) {
	return sessionOf(req, r.cfg.Sessions.DefaultID)
}

func sessionOf(req *http.Request, defaultID string) (id string, fresh bool) {
	if s := req.Header.Get(headerSession); s != "" {
		return clientSession(s), false
	}
	if id, ok := traceIDOf(req.Header.Get("traceparent")); ok {
		return id, false
	}
	if defaultID != "" {
		return clientSession(defaultID), false
	}
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand panics rather than return an error)
	return hex.EncodeToString(b[:]), true
}

// clientSession is the key a client-chosen session id is kept under: the id itself, or, when
// longer than maxSessionIDLength, its SHA-256 (so that long ids stay distinct). Every route
// that reads a client's session id goes through it, so that they all name the same session.
func clientSession(s string) string {
	if len(s) <= maxSessionIDLength {
		return s
	}
	sum := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// traceIDOf is the trace id of a W3C traceparent (version-traceid-parentid-flags), when it
// has four fields and a trace id of 32 characters that are not all zeros.
func traceIDOf(traceparent string) (string, bool) {
	if traceparent == "" || strings.Count(traceparent, "-") != 3 {
		return "", false
	}
	_, rest, _ := strings.Cut(traceparent, "-")
	id, _, _ := strings.Cut(rest, "-")
	if len(id) != 32 || strings.Trim(id, "0") == "" {
		return "", false
	}
	return id, true
}
