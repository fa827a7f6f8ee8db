package replayext

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/callsite"
	"github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/replaycase"
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

// BenchmarkUnscopedCallEveryCaseRecorded is a request on the base URL that names no case,
// made by a fresh session, when every case of the dataset recorded it (the first call of an
// agent whose runs start alike), by the number of cases: what matching across all cases costs
// as the dataset grows.
//
//	go test -run '^$' -bench UnscopedCallEveryCaseRecorded -benchmem ./replayext/
func BenchmarkUnscopedCallEveryCaseRecorded(b *testing.B) {
	const prompt = "What is the weather in Paris today?"
	for _, n := range []int{100, 10_000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			root := filepath.Join(b.TempDir(), "data")
			w, err := dataset.NewWriter(dataset.WriterConfig{Root: root, Staging: root + ".staging", Compression: "zstd", MaxRowsPerFile: 50_000, RowGroupRows: 1000})
			require.NoError(b, err)
			var cases []*replaycase.Case
			for i := range n {
				c := syntheticCase(i, 0)
				c.Steps[0].InputMessages[0].Parts[0].Content = prompt
				c.Steps[0].CallSiteID = callsite.FromStep(&c.Steps[0]).ID(nil)
				cases = append(cases, c)
			}
			_, err = w.Write(cases)
			require.NoError(b, err)
			s := startReplay(b, root, nil)
			body := []byte(`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"` + prompt + `"}]}`)
			handler := s.ext.routes()
			b.ReportAllocs()
			for b.Loop() {
				req := httptest.NewRequest("POST", "/openai/v1/chat/completions", bytes.NewReader(body))
				w := httptest.NewRecorder()
				handler.ServeHTTP(w, req)
				if w.Code != http.StatusOK {
					b.Fatal(w.Code, w.Body.String())
				}
			}
		})
	}
}
