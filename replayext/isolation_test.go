package replayext

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/replaycase"
	"github.com/reprise-dev/reprise/replayext/internal/metadatatest"
)

// Clients replaying at the same time each get their own cursors, and a flood of 100,000
// one-request sessions in between does not reset them.
func TestSessionsAreIsolatedUnderConcurrencyAndFlood(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	cases := writeDataset(t, root, testfixtures.OTelEvents, testfixtures.OTelEvents)
	require.Len(t, cases, 2)
	s := startReplay(t, root, func(c *Config) { c.Sessions.MaxSessions = 1000 })
	req := sdkRequests(t)[0]
	ask := func(session string) (int, string) {
		resp, _ := s.do("POST", "/openai/v1/chat/completions", req, map[string]string{headerSession: session})
		return resp.StatusCode, resp.Header.Get("X-Replay-Case-Id")
	}
	const clients = 8
	first := make([]string, clients)
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			id := fmt.Sprintf("client-%d", c)
			code, caseID := ask(id)
			assert.Equal(t, http.StatusOK, code, "%s: the other clients' requests moved no cursor of this one", id)
			first[c] = caseID
			code, _ = ask(id)
			assert.Equal(t, http.StatusNotFound, code, "%s: the second identical request is a repeat of the run's", id)
		})
	}
	wg.Wait()
	for c := range clients {
		assert.Equal(t, first[0], first[c], "every session starts with the first case's recording")
	}

	// The flood goes through the handler directly (no sockets) to keep the test fast.
	handler := s.ext.routes()
	flood := func(from, to int) {
		for i := from; i < to; i++ {
			r := httptest.NewRequest("POST", "/v1/cases/"+cases[0].CaseID+"/tools/get_weather", bytes.NewReader([]byte(`{"city":"Paris","unit":"celsius"}`)))
			r.Header.Set(headerSession, fmt.Sprintf("flood-%d", i))
			w := httptest.NewRecorder()
			handler.ServeHTTP(w, r)
			if w.Code != http.StatusOK {
				t.Errorf("flood request %d: %d", i, w.Code)
				return
			}
		}
	}
	wg.Go(func() { flood(0, 50_000) })
	wg.Go(func() { flood(50_000, 100_000) })
	wg.Wait()
	assert.LessOrEqual(t, s.ext.sessions.len(), 1000)
	for c := range clients {
		// The recording was served: a reset cursor would serve it again.
		resp, body := s.do("POST", "/openai/v1/chat/completions", req, map[string]string{headerSession: fmt.Sprintf("client-%d", c)})
		assert.Equal(t, http.StatusNotFound, resp.StatusCode, "client-%d: the flood did not reset the cursor", c)
		assert.Contains(t, string(body), "already served every recording", "client-%d", c)
	}
}

func caseIndex(cases []*replaycase.Case, id string) int {
	for i, c := range cases {
		if c.CaseID == id {
			return i
		}
	}
	return -1
}

// A request with neither X-Replay-Session nor traceparent gets a fresh session of its own,
// returned in X-Replay-Session: two such clients never share a cursor.
func TestRequestsWithoutSessionGetAFreshOne(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	writeDataset(t, root, testfixtures.OTelEvents, testfixtures.OTelEvents)
	s := startReplay(t, root, nil)
	req := sdkRequests(t)[0]
	resp1, _ := s.do("POST", "/openai/v1/chat/completions", req, nil)
	resp2, _ := s.do("POST", "/openai/v1/chat/completions", req, nil)
	a, b := resp1.Header.Get(headerSession), resp2.Header.Get(headerSession)
	require.Len(t, a, 32)
	require.Len(t, b, 32)
	assert.NotEqual(t, a, b)
	assert.Equal(t, resp1.Header.Get("X-Replay-Case-Id"), resp2.Header.Get("X-Replay-Case-Id"), "each starts from the first recording")
	resp3, _ := s.do("POST", "/openai/v1/chat/completions", req, map[string]string{headerSession: a})
	assert.NotEqual(t, resp1.Header.Get("X-Replay-Case-Id"), resp3.Header.Get("X-Replay-Case-Id"), "sending the id back continues the session")
	assert.Empty(t, resp3.Header.Get(headerSession))

	resp, body := s.do("GET", "/v1/divergences", nil, nil)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "the divergence log is per session")
	var e map[string]any
	require.NoError(t, json.Unmarshal(body, &e))
}

func TestSessionTelemetry(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	cases := writeDataset(t, root, testfixtures.OTelEvents)
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	s := startReplayWith(t, root, func(c *Config) { c.Sessions.MaxSessions = 4 }, metadatatest.NewSettings(tel), componenttest.NewNopHost())
	for i := range 5 { // the third new session pushes the first out of the probation half
		s.do("POST", "/v1/cases/"+cases[0].CaseID+"/tools/get_weather", `{"city":"Paris","unit":"celsius"}`, map[string]string{headerSession: fmt.Sprint("s", i)})
	}
	metadatatest.AssertEqualExtensionReplaySessions(t, tel, []metricdata.DataPoint[int64]{{Value: 2}}, metricdatatest.IgnoreTimestamp())
	metadatatest.AssertEqualExtensionReplaySessionsEvicted(t, tel, []metricdata.DataPoint[int64]{{Value: 3, Attributes: attribute.NewSet(attribute.String("reason", evictedCapacity))}}, metricdatatest.IgnoreTimestamp())
}
