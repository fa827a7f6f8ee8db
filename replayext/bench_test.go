package replayext

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/internal/testfixtures"
)

// BenchmarkChatReplay is one exact-match Chat Completions replay through the handler, without
// sockets: what the extension adds to the work of any HTTP server. "repeated" sends the same
// body every time (a re-run of a recorded agent: answered from the memos); "new" sends a body
// the memos do not hold each time (trailing spaces vary it), paying the full decode.
func BenchmarkChatReplay(b *testing.B) {
	root := filepath.Join(b.TempDir(), "data")
	cases := writeDataset(b, root, testfixtures.OTelEvents)
	s := startReplay(b, root, nil)
	body, err := json.Marshal(sdkRequests(b)[0])
	require.NoError(b, err)
	handler := s.ext.routes()
	path := "/v1/cases/" + cases[0].CaseID + "/openai/v1/chat/completions"
	variants := make([][]byte, 4*memoEntries) // more than a memo holds: each is gone when it recurs
	for i := range variants {
		variants[i] = append(bytes.Clone(body), bytes.Repeat([]byte(" "), i)...)
	}
	for _, bench := range []struct {
		name string
		body func(i int) []byte
	}{
		{"repeated", func(int) []byte { return body }},
		{"new", func(i int) []byte { return variants[i%len(variants)] }},
	} {
		b.Run(bench.name, func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				req := httptest.NewRequest("POST", path, bytes.NewReader(bench.body(i)))
				i++
				req.Header.Set(headerSession, "bench")
				forgetServed(s, "bench")
				w := httptest.NewRecorder()
				handler.ServeHTTP(w, req)
				if w.Code != http.StatusOK {
					b.Fatal(w.Code, w.Body.String())
				}
			}
		})
	}
}

// BenchmarkReplayAPIs is a replay answered from the memos on each API, through the handler
// without sockets: with a session header (a client that continues its session), and without
// one (each request opens a fresh session, as the load test's requests do).
//
//	go test -run '^$' -bench ReplayAPIs -benchmem ./replayext/
func BenchmarkReplayAPIs(b *testing.B) {
	root := filepath.Join(b.TempDir(), "data")
	cases := writeDataset(b, root, testfixtures.OTelEvents)
	s := startReplay(b, root, nil)
	handler := s.ext.routes()
	first := sdkRequests(b)[0]
	base := "/v1/cases/" + cases[0].CaseID
	for _, api := range []struct {
		name, path string
		body       any
	}{
		{"chat", base + "/openai/v1/chat/completions", first},
		{"responses", base + "/openai/v1/responses", asResponses(b, first)},
		{"messages", base + "/anthropic/v1/messages", asAnthropic(first)},
	} {
		body, err := json.Marshal(api.body)
		require.NoError(b, err)
		for _, session := range []string{"session", "fresh"} {
			b.Run(api.name+"/"+session, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					req := httptest.NewRequest("POST", api.path, bytes.NewReader(body))
					if session == "session" {
						req.Header.Set(headerSession, "bench")
						forgetServed(s, "bench")
					}
					w := httptest.NewRecorder()
					handler.ServeHTTP(w, req)
					if w.Code != http.StatusOK {
						b.Fatal(w.Code, w.Body.String())
					}
				}
			})
		}
	}
}

// forgetServed clears which recordings a session was served. The benchmarks send one recorded
// request over and over in one session, and past the recording's count a repeat is a
// divergence (a 404 in strict mode): this keeps each iteration an exact replay, at the cost
// of one more lock of the sessions.
func forgetServed(s *server, id string) {
	s.ext.sessions.peek(id, func(ses *session) { ses.served = smallMap[cursorKey, int]{} })
}
