package replayext

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/bearertokenauthextension"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/extension/extensiontest"

	"github.com/reprise-dev/reprise/casediff"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/replayext/internal/metadata"
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

// A miss in hybrid mode on a server without an upstream for the API is a 400 naming the
// setting, and leaves the session recorded: its recorded requests are still served, and no
// live divergence is logged.
func TestHybridWithoutAnUpstreamRefuses(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	cases := writeDataset(t, root, testfixtures.OTelEvents)
	s := startReplay(t, root, nil)
	path := "/v1/cases/" + cases[0].CaseID + "/openai/v1/chat/completions"
	session := map[string]string{headerSession: "no-upstream", headerMode: ModeHybrid.String()}
	req := sdkRequests(t)[0]
	req["model"] = "gpt-other"
	resp, body := s.do("POST", path, req, session)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Contains(t, string(body), "hybrid replay needs upstream.openai.endpoint")
	assert.Empty(t, resp.Header.Get(headerLive))

	for _, recorded := range sdkRequests(t) {
		resp, body = s.do("POST", path, recorded, session)
		require.Equal(t, http.StatusOK, resp.StatusCode, "the session still replays: %s", body)
		assert.Empty(t, resp.Header.Get(headerLive))
	}
	divs := divergencesOf(t, s, "no-upstream")
	require.Len(t, divs, 1, "the refused miss is logged")
	assert.True(t, divs[0].Refused)
	assert.False(t, divs[0].Live, "the session never went live")
}

// upstream.<api>.timeout bounds a forwarded call: an upstream that does not answer in time is
// a 504 naming the setting, not a request held for as long as the upstream takes.
func TestHybridHonoursTheUpstreamTimeout(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	cases := writeDataset(t, root, testfixtures.OTelEvents)
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		select {
		case <-release:
		case <-time.After(5 * time.Second): // a bound on the test, were the timeout not applied
		}
	}))
	t.Cleanup(slow.Close)
	t.Cleanup(func() { close(release) }) // first: Close waits for the handler
	s := startReplay(t, root, func(c *Config) {
		c.Mode = ModeHybrid
		c.Upstream.OpenAI.Endpoint = slow.URL + "/v1"
		c.Upstream.OpenAI.Timeout = 200 * time.Millisecond
	})
	req := sdkRequests(t)[0]
	req["temperature"] = 1.7
	start := time.Now()
	resp, body := s.do("POST", "/v1/cases/"+cases[0].CaseID+"/openai/v1/chat/completions", req, nil)
	assert.Less(t, time.Since(start), 2*time.Second, "upstream.openai.timeout is 200ms")
	assert.Equal(t, http.StatusGatewayTimeout, resp.StatusCode, string(body))
	assert.Contains(t, string(body), "upstream.openai.timeout")
}

// With auth configured, the client's credentials are the replay server's: they never reach
// the upstream, in a header or in the query, which gets the credentials of
// upstream.openai.headers instead, or none.
func TestHybridWithAuthDoesNotForwardTheReplayToken(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	cases := writeDataset(t, root, testfixtures.OTelEvents)
	authID, auth := startBearerAuth(t, "replay-token")
	path := "/v1/cases/" + cases[0].CaseID + "/openai/v1/chat/completions"
	changed := sdkRequests(t)[0]
	changed["temperature"] = 1.7

	for _, upstreamKey := range []string{"", "Bearer sk-upstream"} {
		u := startUpstream(t)
		s := startReplayWith(t, root, func(c *Config) {
			require.NoError(t, confmap.NewFromStringMap(map[string]any{
				"auth": map[string]any{"authenticator": authID.String(), "request_params": []string{"replay_key"}},
			}).Unmarshal(c))
			c.Mode = ModeHybrid
			c.Upstream.OpenAI.Endpoint = u.URL + "/v1"
			if upstreamKey != "" {
				c.Upstream.OpenAI.Headers.Set("Authorization", configopaque.String(upstreamKey))
			}
		}, extensiontest.NewNopSettings(metadata.Type), extensionsHost{authID: auth})
		resp, _ := s.do("POST", path, changed, map[string]string{"Authorization": "Bearer wrong"})
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode, "auth is on")
		for _, q := range []string{"", "?replay_key=replay-token"} {
			resp, body := s.do("POST", path+q, changed, map[string]string{"Authorization": "Bearer replay-token", "X-Api-Key": "replay-token"})
			require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
			require.Equal(t, "true", resp.Header.Get(headerLive))
		}
		require.Equal(t, 2, u.count())
		for _, call := range u.calls {
			assert.Equal(t, upstreamKey, call.Header.Get("Authorization"), "the upstream's own key, or none")
			assert.Empty(t, call.Header.Get("X-Api-Key"))
			assert.Empty(t, call.URL.Query().Get("replay_key"))
			for k, vs := range call.Header {
				for _, v := range vs {
					assert.NotContains(t, v, "replay-token", "header %s", k)
				}
			}
		}
	}
}

// startBearerAuth starts a bearertokenauth extension that accepts token, named
// bearertokenauth/replay.
func startBearerAuth(t *testing.T, token string) (component.ID, component.Component) {
	authID := component.MustNewIDWithName("bearertokenauth", "replay")
	f := bearertokenauthextension.NewFactory()
	acfg := f.CreateDefaultConfig().(*bearertokenauthextension.Config)
	acfg.BearerToken = configopaque.String(token)
	auth, err := f.Create(t.Context(), extensiontest.NewNopSettings(f.Type()), acfg)
	require.NoError(t, err)
	require.NoError(t, auth.Start(t.Context(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, auth.Shutdown(context.Background())) })
	return authID, auth
}

// extensionsHost is a host with the given extensions (an authenticator).
type extensionsHost map[component.ID]component.Component

func (h extensionsHost) GetExtensions() map[component.ID]component.Component { return h }

// A misspelt mode is refused, not replayed in the configured mode.
func TestUnknownModeHeaderRefuses(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	cases := writeDataset(t, root, testfixtures.OTelEvents)
	s := startReplay(t, root, nil)
	resp, body := s.do("POST", "/v1/cases/"+cases[0].CaseID+"/openai/v1/chat/completions", sdkRequests(t)[0], map[string]string{headerMode: "lenint"})
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Contains(t, string(body), `X-Replay-Mode must be \"strict\", \"lenient\" or \"hybrid\"`)
	assert.NotContains(t, string(body), "lenint", "an error body never echoes the request")
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
