package replayext

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/internal/testfixtures"
)

// Whatever a client posts to a replay route, in whatever mode, the answer is a replayed one or
// an error in the route's API shape with a message: never a 5xx (every recorded case here can
// be read) or a panic, and never an error body that quotes the request.
// Run: go test -run '^$' -fuzz FuzzReplayRoutesAnswerInTheirShape ./replayext/
func FuzzReplayRoutesAnswerInTheirShape(f *testing.F) {
	root := filepath.Join(f.TempDir(), "data")
	cases := writeDataset(f, root, testfixtures.OTelEvents)
	s := startReplay(f, root, nil)
	scoped := "/v1/cases/" + cases[0].CaseID
	routes := []string{
		scoped + "/openai/v1/chat/completions", "/openai/v1/chat/completions",
		scoped + "/openai/v1/responses", "/openai/v1/responses",
		scoped + "/anthropic/v1/messages", "/anthropic/v1/messages",
		scoped + "/openai/v1/embeddings", "/openai/v1/embeddings",
		scoped + "/tools/get_weather", scoped + "/retrieval",
	}
	handler := s.ext.routes()
	for i, chat := range sdkRequests(f) {
		for j, body := range []any{chat, asResponses(f, chat), asAnthropic(chat)} {
			raw, err := json.Marshal(body)
			require.NoError(f, err)
			f.Add(uint8(2*j+i), raw, "")
			f.Add(uint8(2*j+1-i), raw, "lenient")
		}
	}
	f.Add(uint8(6), []byte(`{"model":"text-embedding-3-small","input":["`+fuzzMarker+`"],"dimensions":2}`), "lenient")
	f.Add(uint8(8), []byte(`{"city":"`+fuzzMarker+`"}`), "strict")
	f.Add(uint8(9), []byte(`{"query":"`+fuzzMarker+`","data_source":1}`), "lenient")
	f.Add(uint8(3), []byte(`{"model":"m","input":[{"type":"item_reference","id":"`+fuzzMarker+`"}]}`), "")
	f.Add(uint8(4), []byte(`null`), "hybrid")
	f.Fuzz(func(t *testing.T, route uint8, body []byte, mode string) {
		path := routes[int(route)%len(routes)]
		req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
		if mode != "" {
			req.Header.Set(headerMode, mode)
		}
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req)
		require.Less(t, rec.Code, 500, "%s: %s", path, rec.Body)
		if rec.Code < 400 {
			return
		}
		var e apiError
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &e), "%s: %s", path, rec.Body)
		assert.NotEmpty(t, e.Error.Message, "%s: %s", path, rec.Body)
		if strings.Contains(path, "/anthropic/") {
			assert.Equal(t, "error", e.Type, "%s: %s", path, rec.Body)
		}
		assert.NotContains(t, rec.Body.String(), fuzzMarker, "an error body never quotes the request")
	})
}

// fuzzMarker stands for personal data in a request body: no error may quote it.
const fuzzMarker = "PRIVATE-555-0100"
