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

	"github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/replaycase"
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

// A client that goes away in the middle of a replayed stream did not get the answer: the
// recording does not count as served, so the same request again (the agent retries the call
// whose stream broke) gets it, where strict replay refused it as made more often than
// recorded.
func TestAStreamCutOffIsNotServed(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	w, err := dataset.NewWriter(dataset.WriterConfig{Root: root, Staging: root + ".staging", Compression: "zstd", MaxRowsPerFile: 100, RowGroupRows: 100})
	require.NoError(t, err)
	c := syntheticCase(1, 100)
	// Larger than the socket buffers hold: the server is still writing it when the client leaves.
	c.Steps[0].OutputMessages[0].Parts[0].Content = strings.Repeat("long answer ", 4<<20)
	_, err = w.Write([]*replaycase.Case{c})
	require.NoError(t, err)
	s := startReplay(t, root, nil)
	body := map[string]any{"model": "gpt-4o-mini", "stream": true, "messages": []any{map[string]any{"role": "user", "content": c.Steps[0].InputMessages[0].Parts[0].Content}}}
	raw, err := json.Marshal(body)
	require.NoError(t, err)
	req, err := http.NewRequest("POST", s.base+"/v1/cases/"+c.CaseID+"/openai/v1/chat/completions", bytes.NewReader(raw))
	require.NoError(t, err)
	req.Header.Set(headerSession, "cut-off")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(line, "data: "), line)
	require.NoError(t, resp.Body.Close()) // the client leaves mid-stream

	// Once the server has seen the write fail, the same request gets the recording.
	body["stream"] = false
	require.Eventually(t, func() bool {
		resp, out := s.do("POST", "/v1/cases/"+c.CaseID+"/openai/v1/chat/completions", body, map[string]string{headerSession: "cut-off"})
		return resp.StatusCode == http.StatusOK && bytes.Contains(out, []byte("long answer"))
	}, 10*time.Second, 100*time.Millisecond, "the cut-off stream counted as served")
}
