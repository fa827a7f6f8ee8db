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
// sockets: what the extension adds to the work of any HTTP server.
func BenchmarkChatReplay(b *testing.B) {
	root := filepath.Join(b.TempDir(), "data")
	cases := writeDataset(b, root, testfixtures.OTelEvents)
	s := startReplay(b, root, nil)
	body, err := json.Marshal(sdkRequests(b)[0])
	require.NoError(b, err)
	handler := s.ext.routes()
	path := "/v1/cases/" + cases[0].CaseID + "/openai/v1/chat/completions"
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest("POST", path, bytes.NewReader(body))
		req.Header.Set(headerSession, "bench")
		w := httptest.NewRecorder()
		handler.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatal(w.Code, w.Body.String())
		}
	}
}
