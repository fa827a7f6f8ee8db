package replayext

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/internal/testfixtures"
)

// A live answer that takes longer than the server's write_timeout (30 s by default; a slow
// model, a long stream) is bounded by upstream.<api>.timeout, not cut off by write_timeout
// with no error.
func TestHybridLiveAnswerOutlastsTheServerWriteTimeout(t *testing.T) {
	slowLiveStreamIsServedWhole(t, func(c *Config) {
		c.WriteTimeout = 300 * time.Millisecond
		c.Upstream.OpenAI.Timeout = 10 * time.Second
	})
}

// slowLiveStreamIsServedWhole asks a hybrid server, configured by configure, for a live answer
// that streams for 900 ms, and checks that the client gets all of it.
func slowLiveStreamIsServedWhole(t *testing.T, configure func(*Config)) {
	t.Helper()
	root := filepath.Join(t.TempDir(), "data")
	cases := writeDataset(t, root, testfixtures.OTelEvents)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i := 0; i < 3; i++ {
			fmt.Fprintf(w, "data: {\"event\":%d}\n\n", i)
			w.(http.Flusher).Flush()
			time.Sleep(300 * time.Millisecond)
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(slow.Close)
	s := startReplay(t, root, func(c *Config) {
		c.Mode = ModeHybrid
		c.Upstream.OpenAI.Endpoint = slow.URL + "/v1"
		configure(c)
	})
	changed := sdkRequests(t)[0]
	changed["temperature"] = 0.9
	resp, body := s.do("POST", "/v1/cases/"+cases[0].CaseID+"/openai/v1/chat/completions", changed, map[string]string{headerSession: "slow"})
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	assert.Equal(t, "true", resp.Header.Get(headerLive))
	assert.Equal(t, []string{`{"event":0}`, `{"event":1}`, `{"event":2}`, "[DONE]"}, readSSE(t, body), "the whole live stream")
}
