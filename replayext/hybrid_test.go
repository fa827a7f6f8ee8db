package replayext

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/casediff"
	"github.com/reprise-dev/reprise/internal/testfixtures"
)

// fakeUpstream is the live API of hybrid tests: it counts the calls it gets and answers each
// with a stream of two events, flushed one by one.
type fakeUpstream struct {
	*httptest.Server
	mu    sync.Mutex
	calls []*http.Request
}

func startUpstream(t *testing.T) *fakeUpstream {
	u := &fakeUpstream{}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		u.mu.Lock()
		u.calls = append(u.calls, req.Clone(req.Context()))
		n := len(u.calls)
		u.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		for i := 0; i < 2; i++ {
			fmt.Fprintf(w, "data: {\"live\":%d,\"event\":%d}\n\n", n, i)
			w.(http.Flusher).Flush()
		}
	}))
	t.Cleanup(u.Close)
	return u
}

func (u *fakeUpstream) count() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.calls)
}

func hybridServer(t *testing.T, root string, u *fakeUpstream) *server {
	return startReplay(t, root, func(c *Config) {
		c.Mode = ModeHybrid
		c.Upstream.OpenAI.Endpoint = u.URL + "/v1"
	})
}

func TestHybridServesRecordingsWithoutCallingTheUpstream(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	cases := writeDataset(t, root, testfixtures.OTelEvents)
	u := startUpstream(t)
	s := hybridServer(t, root, u)
	for _, req := range sdkRequests(t) {
		resp, body := s.do("POST", "/v1/cases/"+cases[0].CaseID+"/openai/v1/chat/completions", req, map[string]string{headerSession: "same"})
		require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
		assert.Empty(t, resp.Header.Get(headerLive))
	}
	assert.Zero(t, u.count(), "an unchanged run never reaches the upstream")
}

func TestHybridGoesLiveAtTheFirstDivergenceForTheRestOfTheSession(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	cases := writeDataset(t, root, testfixtures.OTelEvents)
	u := startUpstream(t)
	s := hybridServer(t, root, u)
	path := "/v1/cases/" + cases[0].CaseID + "/openai/v1/chat/completions"
	reqs := sdkRequests(t)
	changed := sdkRequests(t)[1]
	changed["messages"].([]any)[0].(map[string]any)["content"] = "You are a terse weather bot."
	changed["temperature"] = 0.9
	session := map[string]string{headerSession: "h1", "Authorization": "Bearer sk-client-own"}

	resp, body := s.do("POST", path, reqs[0], session)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	assert.Zero(t, u.count(), "recorded until the first divergence")

	strict := map[string]string{headerSession: "s1", headerMode: ModeStrict.String()}
	resp, _ = s.do("POST", path, changed, strict)
	assert.Equal(t, http.StatusNotFound, resp.StatusCode, "strict still refuses")
	assert.Zero(t, u.count())

	resp, body = s.do("POST", path, changed, session)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	assert.Equal(t, "true", resp.Header.Get(headerLive))
	assert.Equal(t, cases[0].CaseID, resp.Header.Get(headerDerivedFrom))
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	assert.Equal(t, []string{`{"live":1,"event":0}`, `{"live":1,"event":1}`}, readSSE(t, body), "the upstream's stream, as sent")
	require.Equal(t, 1, u.count())
	call := u.calls[0]
	assert.Equal(t, "/v1/chat/completions", call.URL.Path)
	assert.Equal(t, "Bearer sk-client-own", call.Header.Get("Authorization"), "the client's own credentials, in hybrid mode only")
	assert.Empty(t, call.Header.Get(headerSession), "replay's headers stay here")

	// The session stays live: even a request its case recorded is now answered live.
	resp, _ = s.do("POST", path, reqs[0], session)
	assert.Equal(t, "true", resp.Header.Get(headerLive))
	assert.Equal(t, 2, u.count())
	// Another session of the same case still replays.
	resp, _ = s.do("POST", path, reqs[0], map[string]string{headerSession: "h2"})
	assert.Empty(t, resp.Header.Get(headerLive))
	assert.Equal(t, 2, u.count())

	_, body = s.do("GET", "/v1/divergences?session=h1", nil, nil)
	var divs struct{ Divergences []Divergence }
	require.NoError(t, json.Unmarshal(body, &divs))
	require.Len(t, divs.Divergences, 1, "one divergence: where the session went live")
	d := divs.Divergences[0]
	assert.True(t, d.Live)
	assert.Equal(t, cases[0].CaseID, d.CaseID)
	assert.Equal(t, []Finding{
		{Type: casediff.PromptChanged, Path: "messages[0].content[0].text"},
		{Type: casediff.ModelConfigChanged, Path: "temperature"},
	}, d.Findings)
	assert.NotContains(t, string(body), "terse", "paths only, no values")
}

func TestHybridWithoutAnUpstreamRefuses(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	cases := writeDataset(t, root, testfixtures.OTelEvents)
	s := startReplay(t, root, nil)
	req := sdkRequests(t)[0]
	req["model"] = "gpt-other"
	resp, body := s.do("POST", "/v1/cases/"+cases[0].CaseID+"/openai/v1/chat/completions", req, map[string]string{headerMode: ModeHybrid.String()})
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Contains(t, string(body), "hybrid replay needs upstream.openai.endpoint")
}

// A misspelt mode is refused, not replayed in the configured mode.
func TestUnknownModeHeaderRefuses(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	cases := writeDataset(t, root, testfixtures.OTelEvents)
	s := startReplay(t, root, nil)
	resp, body := s.do("POST", "/v1/cases/"+cases[0].CaseID+"/openai/v1/chat/completions", sdkRequests(t)[0], map[string]string{headerMode: "lenint"})
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Contains(t, string(body), `X-Replay-Mode: mode must be \"strict\", \"lenient\" or \"hybrid\", got \"lenint\"`)
}

func TestLenientDivergencesCarryFindingTypes(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	cases := writeDataset(t, root, testfixtures.OTelEvents)
	s := startReplay(t, root, func(c *Config) { c.Mode = ModeLenient })
	c := cases[0]
	require.NotEmpty(t, c.ToolCalls)
	tc := c.ToolCalls[0]
	resp, body := s.do("POST", "/v1/cases/"+c.CaseID+"/tools/"+tc.Name, `{"city":"Lyon"}`, map[string]string{headerSession: "f1"})
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	_, body = s.do("GET", "/v1/divergences?session=f1", nil, nil)
	var divs struct{ Divergences []Divergence }
	require.NoError(t, json.Unmarshal(body, &divs))
	require.Len(t, divs.Divergences, 1)
	require.NotEmpty(t, divs.Divergences[0].Findings)
	for _, f := range divs.Divergences[0].Findings {
		assert.Equal(t, casediff.ToolArgsChanged, f.Type, f.Path)
	}
}

func TestHybridUnreachableUpstreamIsABadGateway(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	cases := writeDataset(t, root, testfixtures.OTelEvents)
	u := startUpstream(t)
	s := hybridServer(t, root, u)
	u.Close() // nothing listens there any more
	req := sdkRequests(t)[0]
	req["model"] = "gpt-other"
	resp, body := s.do("POST", "/v1/cases/"+cases[0].CaseID+"/openai/v1/chat/completions", req, nil)
	assert.Equal(t, http.StatusBadGateway, resp.StatusCode)
	assert.Contains(t, string(body), `"type":"server_error"`)
	assert.Contains(t, string(body), "could not be reached")
}

func TestAPISuffix(t *testing.T) {
	assert.Equal(t, "/chat/completions", apiSuffix("/v1/cases/c1/openai/v1/chat/completions", apiOpenAI))
	assert.Equal(t, "/chat/completions", apiSuffix("/openai/v1/chat/completions", apiOpenAI))
	assert.Equal(t, "/v1/messages", apiSuffix("/v1/cases/c1/anthropic/v1/messages", apiAnthropic))
}
