package replayext

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/internal/testfixtures"
)

// A client that goes away in the middle of a live stream (hybrid mode) ends the upstream
// call: the model does not go on generating, and billing, an answer nobody reads.
func TestAClientLeavingALiveStreamEndsTheUpstreamCall(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	cases := writeDataset(t, root, testfixtures.OTelEvents)
	ended := make(chan error, 1)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"event\":0}\n\n")
		w.(http.Flusher).Flush()
		select { // a long generation
		case <-r.Context().Done():
			ended <- r.Context().Err()
		case <-time.After(20 * time.Second):
			ended <- nil
		}
	}))
	t.Cleanup(slow.Close)
	s := startReplay(t, root, func(c *Config) {
		c.Mode = ModeHybrid
		c.Upstream.OpenAI.Endpoint = slow.URL + "/v1"
	})
	changed := sdkRequests(t)[0]
	changed["temperature"] = 0.9
	changed["stream"] = true
	raw, err := json.Marshal(changed)
	require.NoError(t, err)
	req, err := http.NewRequest("POST", s.base+"/v1/cases/"+cases[0].CaseID+"/openai/v1/chat/completions", bytes.NewReader(raw))
	require.NoError(t, err)
	req.Header.Set(headerSession, "leaves")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(line, "data: "), line)
	require.NoError(t, resp.Body.Close()) // the client leaves mid-stream
	select {
	case err := <-ended:
		require.Error(t, err, "the upstream call ran to its end after the client left")
	case <-time.After(10 * time.Second):
		t.Fatal("the upstream call still runs 10 s after the client left")
	}
}
