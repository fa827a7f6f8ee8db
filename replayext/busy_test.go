package replayext

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/replayext/internal/metadatatest"
)

// heldRequest sends a request to path whose body the test writes later: it holds its slot
// while the route reads the body. It returns the function that sends the body and the answer.
func heldRequest(t *testing.T, s *server, path string) (send func(string), answer <-chan int) {
	t.Helper()
	body, w := io.Pipe()
	req, err := http.NewRequest("POST", s.base+path, body)
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	status := make(chan int, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			status <- 0
			return
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		status <- resp.StatusCode
	}()
	return func(b string) { _, _ = w.Write([]byte(b)); _ = w.Close() }, status
}

// A request past max_concurrent_requests waits for one to end: answered when one does within
// the wait, else refused with a 503 and Retry-After in its API's error shape (the SDKs retry
// it), and counted. The bodies held are bounded by max_concurrent_requests.
func TestRequestsPastTheLimitWaitThenGetA503(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	writeDataset(t, root, testfixtures.OpenInference)
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	s := startReplayWith(t, root, func(c *Config) { c.MaxConcurrentRequests = 1 }, metadatatest.NewSettings(tel), componenttest.NewNopHost())
	raw, err := json.Marshal(sdkRequests(t)[0])
	require.NoError(t, err)
	chat := "/openai/v1/chat/completions"

	send, held := heldRequest(t, s, chat)
	require.Eventually(t, func() bool { return len(s.ext.slots) == 1 }, 5*time.Second, time.Millisecond, "the held request takes the only slot")

	resp, body := s.do("POST", chat, string(raw), nil)
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, string(body))
	assert.Equal(t, "1", resp.Header.Get("Retry-After"))
	var openaiErr struct {
		Error struct{ Type, Message string }
	}
	require.NoError(t, json.Unmarshal(body, &openaiErr), string(body))
	assert.Equal(t, "server_error", openaiErr.Error.Type)
	assert.Contains(t, openaiErr.Error.Message, "max_concurrent_requests")
	assert.NotContains(t, string(body), "messages", "the error does not quote the request")

	resp, body = s.do("POST", "/anthropic/v1/messages", `{}`, nil)
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, string(body))
	var anthropicErr struct {
		Type  string
		Error struct{ Type string }
	}
	require.NoError(t, json.Unmarshal(body, &anthropicErr), string(body))
	assert.Equal(t, "error", anthropicErr.Type)
	assert.Equal(t, "api_error", anthropicErr.Error.Type)
	metadatatest.AssertEqualExtensionReplayRequestsBusy(t, tel, []metricdata.DataPoint[int64]{{Value: 2}}, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())

	// One waiting while the slot frees is answered, not refused.
	waiting := make(chan int, 1)
	go func() {
		resp, _ := s.do("POST", chat, string(raw), map[string]string{headerSession: "waiting"})
		waiting <- resp.StatusCode
	}()
	time.Sleep(200 * time.Millisecond) // well within its wait
	send(string(raw))
	assert.Equal(t, http.StatusOK, <-held)
	assert.Equal(t, http.StatusOK, <-waiting)
	assert.Empty(t, s.ext.slots, "every slot given back")
	metadatatest.AssertEqualExtensionReplayRequestsBusy(t, tel, []metricdata.DataPoint[int64]{{Value: 2}}, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
}
