package replayext

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/internal/testfixtures"
)

// Bodies the API would refuse get OpenAI-shaped 400s naming the field, through a real HTTP
// client; no error names a server path or echoes the request.
func TestMalformedRequestsGet400(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	cases := writeDataset(t, root, testfixtures.OTelEvents)
	s := startReplay(t, root, nil)
	path := "/v1/cases/" + cases[0].CaseID + "/openai/v1/chat/completions"
	valid := `"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]`
	for _, c := range []struct{ name, body, param string }{
		{"null body", `null`, ""},
		{"empty body", ``, ""},
		{"messages a string", `{"model":"gpt-4o-mini","messages":"x"}`, "messages"},
		{"missing messages", `{"model":"gpt-4o-mini"}`, "messages"},
		{"missing model", `{"messages":[{"role":"user","content":"hi"}]}`, "model"},
		{"content a number", `{"model":"gpt-4o-mini","messages":[{"role":"user","content":1}]}`, "messages[0].content"},
		{"stream yes", `{` + valid + `,"stream":"yes"}`, "stream"},
		{"stream 1", `{` + valid + `,"stream":1}`, "stream"},
		{"stream {}", `{` + valid + `,"stream":{}}`, "stream"},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp, body := s.do("POST", path, c.body, nil)
			require.Equal(t, http.StatusBadRequest, resp.StatusCode, string(body))
			var e struct {
				Error struct {
					Message string
					Type    string
					Param   *string
					Code    string
				}
			}
			require.NoError(t, json.Unmarshal(body, &e))
			assert.Equal(t, "invalid_request_error", e.Error.Type)
			if c.param == "" {
				assert.Nil(t, e.Error.Param)
			} else {
				require.NotNil(t, e.Error.Param)
				assert.Equal(t, c.param, *e.Error.Param)
			}
			assert.NotContains(t, string(body), root)
		})
	}
	resp, body := s.do("POST", "/v1/cases/nope/openai/v1/chat/completions", `{`+valid+`}`, nil)
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	assert.NotContains(t, string(body), root, "no server path in errors")
}

// A large request that matches nothing gets a small answer: errors never echo the request.
func TestMissAnswerIsBounded(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	cases := writeDataset(t, root, testfixtures.OTelEvents)
	s := startReplay(t, root, func(c *Config) { c.MaxRequestBodySize = 32 << 20 })
	req := sdkRequests(t)[0]
	req["messages"].([]any)[1].(map[string]any)["content"] = strings.Repeat("weather ", 2<<20)
	resp, body := s.do("POST", "/v1/cases/"+cases[0].CaseID+"/openai/v1/chat/completions", req, nil)
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
	assert.Less(t, len(body), 1024, string(body))

	s = startReplay(t, root, func(c *Config) { c.MaxRequestBodySize = 1 << 20 })
	resp, body = s.do("POST", "/v1/cases/"+cases[0].CaseID+"/openai/v1/chat/completions", req, nil)
	require.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
	assert.Less(t, len(body), 1024)
}
