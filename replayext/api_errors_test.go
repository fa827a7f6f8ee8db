package replayext

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/extension/extensiontest"

	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/replayext/internal/metadata"
)

// apiError is an error body in either API's shape: OpenAI's {"error": {"message", "type",
// "code"}} or Anthropic's {"type": "error", "error": {"type", "message"}}.
type apiError struct {
	Type  string
	Error struct{ Message, Type, Code string }
}

// Every error the server answers, the HTTP server's own included (no such route, a route that
// takes another method, credentials that auth refuses, a Content-Encoding it cannot decode), is
// in the error shape of the API the path belongs to, so that the SDK raises it with its message:
// they were plain text ("404 page not found"), which the SDKs read as an error without one.
func TestEveryErrorIsInTheAPIShape(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	cases := writeDataset(t, root, testfixtures.OTelEvents)
	authID, auth := startBearerAuth(t, "replay-token")
	s := startReplayWith(t, root, func(c *Config) {
		require.NoError(t, confmap.NewFromStringMap(map[string]any{"auth": map[string]any{"authenticator": authID.String()}}).Unmarshal(c))
	}, extensiontest.NewNopSettings(metadata.Type), extensionsHost{authID: auth})
	key := map[string]string{"Authorization": "Bearer replay-token"}
	scoped := "/v1/cases/" + cases[0].CaseID

	for _, tc := range []struct {
		name, method, path string
		header             map[string]string
		status             int
		anthropic          bool
		typ                string
	}{
		{"no key", "POST", "/openai/v1/chat/completions", nil, http.StatusUnauthorized, false, "invalid_request_error"},
		{"wrong key", "POST", scoped + "/anthropic/v1/messages", map[string]string{"Authorization": "Bearer wrong"}, http.StatusUnauthorized, true, "authentication_error"},
		{"no key, a listing", "GET", "/v1/divergences?session=s", nil, http.StatusUnauthorized, false, "invalid_request_error"},
		{"no such route", "POST", "/openai/v1/completions", key, http.StatusNotFound, false, "not_found_error"},
		{"no such route, scoped", "POST", scoped + "/openai/v1/audio/speech", key, http.StatusNotFound, false, "not_found_error"},
		{"no such Anthropic route", "POST", scoped + "/anthropic/v1/complete", key, http.StatusNotFound, true, "not_found_error"},
		{"another method", "GET", "/openai/v1/chat/completions", key, http.StatusMethodNotAllowed, false, "invalid_request_error"},
		{"another method, Anthropic", "PUT", "/anthropic/v1/messages", key, http.StatusMethodNotAllowed, true, "invalid_request_error"},
		{"empty case id, Anthropic", "POST", "/v1/cases//anthropic/v1/messages", key, http.StatusBadRequest, true, "invalid_request_error"},
		{"unknown Content-Encoding", "POST", "/openai/v1/chat/completions", map[string]string{"Authorization": "Bearer replay-token", "Content-Encoding": "x-private"}, http.StatusBadRequest, false, "invalid_request_error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := s.do(tc.method, tc.path, "{}", tc.header)
			require.Equal(t, tc.status, resp.StatusCode, string(body))
			assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
			var e apiError
			require.NoError(t, json.Unmarshal(body, &e), string(body))
			assert.NotEmpty(t, e.Error.Message, string(body))
			assert.Equal(t, tc.typ, e.Error.Type, string(body))
			if tc.anthropic {
				assert.Equal(t, "error", e.Type, string(body))
			}
			assert.NotContains(t, string(body), "x-private", "an error body never echoes the request")
			if tc.status == http.StatusMethodNotAllowed {
				assert.Equal(t, "POST", resp.Header.Get("Allow"))
			}
		})
	}
	// A route that exists is not touched: the right key on the right method replays.
	resp, body := s.do("POST", scoped+"/openai/v1/chat/completions", sdkRequests(t)[0], key)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	resp, body = s.do("GET", "/v1/cases/"+cases[0].CaseID, nil, key)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
}

// A client whose OpenAI base URL lacks the /v1 is told so in the 404, not only given the list of
// routes.
func TestABaseURLWithoutV1IsNamedInTheNotFound(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	cases := writeDataset(t, root, testfixtures.OTelEvents)
	s := startReplay(t, root, nil)
	scoped := "/v1/cases/" + cases[0].CaseID
	for _, path := range []string{scoped + "/openai/chat/completions", "/openai/chat/completions", scoped + "/openai/responses"} {
		resp, body := s.do("POST", path, "{}", nil)
		require.Equal(t, http.StatusNotFound, resp.StatusCode, string(body))
		var e apiError
		require.NoError(t, json.Unmarshal(body, &e), string(body))
		assert.Contains(t, e.Error.Message, "base URL must end in /openai/v1", path)
	}
	// A path that is wrong for another reason keeps the list of routes.
	_, body := s.do("POST", scoped+"/anthropic/v1/complete", "{}", nil)
	assert.NotContains(t, string(body), "base URL must end in")
}

// ANTHROPIC_BASE_URL, which `reprise ci` sets to …/anthropic, is a base without /v1 to the
// Anthropic SDKs and one with it to the Vercel AI SDK's @ai-sdk/anthropic, which appends only
// /messages: both paths replay the recorded call (the second was a 404, and a Vercel agent's
// case failed under reprise ci).
func TestAnAnthropicBaseURLWithOrWithoutV1Replays(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	cases := writeDataset(t, root, testfixtures.OTelEvents)
	s := startReplay(t, root, nil)
	first := asAnthropic(sdkRequests(t)[0])
	for i, path := range []string{
		"/v1/cases/" + cases[0].CaseID + "/anthropic/v1/messages",
		"/v1/cases/" + cases[0].CaseID + "/anthropic/messages",
		"/anthropic/messages",
	} {
		resp, body := s.do("POST", path, first, map[string]string{headerSession: fmt.Sprintf("base-%d", i)})
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s: %s", path, body)
		var msg struct{ Content []struct{ Type, ID string } }
		require.NoError(t, json.Unmarshal(body, &msg))
		require.Len(t, msg.Content, 1, path)
		assert.Equal(t, "call_1_0", msg.Content[0].ID, "%s: the recorded call", path)
	}
}
