package replayext

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/internal/testfixtures"
)

// A base URL built with an unset case id ($CASE_ID empty in a shell) is refused naming the case
// id, not redirected to a path that names "openai" as the case. The client does not follow
// redirects, as curl -s does not: before, it got a 307 and no body.
func TestAnEmptyCaseIDIsRefusedNotRedirected(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	writeDataset(t, root, testfixtures.OTelEvents)
	s := startReplay(t, root, nil)
	raw, err := json.Marshal(sdkRequests(t)[0])
	require.NoError(t, err)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, path := range []string{"/v1/cases//openai/v1/chat/completions", "/v1/cases//anthropic/v1/messages", "/v1/cases//tools/get_weather"} {
		resp, err := client.Post(s.base+path, "application/json", bytes.NewReader(raw))
		require.NoError(t, err)
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s: %s", path, body)
		var answer struct {
			Type  string
			Error struct{ Message, Type, Param string }
		}
		require.NoError(t, json.Unmarshal(body, &answer), string(body))
		if strings.Contains(path, "/anthropic/") { // Anthropic's shape, which has no param
			assert.Equal(t, "error", answer.Type, path)
			assert.Equal(t, "invalid_request_error", answer.Error.Type, path)
		} else {
			assert.Equal(t, "case_id", answer.Error.Param, path)
		}
		assert.Contains(t, answer.Error.Message, "empty segment", path)
	}
	// A path that is not under a case is refused the same way, naming the path.
	resp, err := client.Post(s.base+"/openai//v1/chat/completions", "application/json", bytes.NewReader(raw))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
}
