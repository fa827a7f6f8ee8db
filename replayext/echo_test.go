package replayext

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/extension/extensiontest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/replayext/internal/metadata"
)

// Error bodies are small and never echo the request: a 64 KiB header or query value refused
// as a bad mode or time does not come back in the answer.
func TestErrorsDoNotEchoLargeValues(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	cases := writeDataset(t, root, testfixtures.OTelEvents)
	s := startReplay(t, root, nil)
	big := strings.Repeat("x", 64<<10)
	resp, body := s.do("POST", "/v1/cases/"+cases[0].CaseID+"/openai/v1/chat/completions", sdkRequests(t)[0], map[string]string{headerMode: big})
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Less(t, len(body), 1024, "the mode header's value is not echoed")
	for _, p := range []string{"since", "until"} {
		resp, body = s.do("GET", "/v1/cases?"+p+"="+big, nil, nil)
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
		assert.Less(t, len(body), 1024, "the %s value is not echoed", p)
		assert.Contains(t, string(body), `"param":"`+p+`"`)
	}
}

// A 404 for a case or a call that is not there does not quote the id from the URL back (a
// path segment may carry anything a client puts in it); the debug log names it.
func TestNotFoundAnswersDoNotEchoTheID(t *testing.T) {
	s, logs := startReplayWithDebugLog(t)
	marker := "not-a-case-id-" + strings.Repeat("q", 40) // no secret: the log names it as it is
	absent := "0123456789abcdef0123456789abcdef"         // well-formed, not recorded
	chat := sdkRequests(t)[0]
	for _, id := range []string{marker, absent} {
		for _, r := range []struct{ method, path string }{
			{"GET", "/v1/cases/" + id},
			{"POST", "/v1/cases/" + id + "/openai/v1/chat/completions"},
			{"POST", "/v1/cases/" + id + "/openai/v1/responses"},
			{"GET", "/v1/cases/" + id + "/openai/v1/responses/resp_1"},
			{"POST", "/v1/cases/" + id + "/anthropic/v1/messages"},
			{"POST", "/v1/cases/" + id + "/openai/v1/embeddings"},
			{"POST", "/v1/cases/" + id + "/tools/get_weather"},
			{"POST", "/v1/cases/" + id + "/retrieval"},
			{"GET", "/v1/calls/" + id},
		} {
			var body any
			if r.method == "POST" {
				body = chat
			}
			resp, got := s.do(r.method, r.path, body, nil)
			assert.Equal(t, http.StatusNotFound, resp.StatusCode, "%s %s: %s", r.method, r.path, got)
			assert.NotContains(t, strings.ToLower(string(got)), id, "%s %s echoes the id", r.method, r.path)
			assert.Contains(t, string(got), "with that", "%s %s: the answer says what was not found", r.method, r.path)
		}
		assert.NotEmpty(t, logs.FilterMessageSnippet("no such case").Filter(func(e observer.LoggedEntry) bool {
			return strings.Contains(e.ContextMap()["error"].(string), id)
		}).All(), "the debug log names the case id %s", id)
		assert.NotEmpty(t, logs.FilterMessageSnippet("no recorded call").FilterField(zap.String("call_site_id", id)).All(), "the debug log names the call-site id")
	}
}

// The debug log names the id a request gave, scrubbed as the request's body is: an API key
// pasted where the case id belongs (a base URL built from the wrong variable) is not written
// to the collector's log, whose every other line holds scrubbed telemetry only.
func TestNotFoundLogsDoNotKeepASecretInTheID(t *testing.T) {
	s, logs := startReplayWithDebugLog(t)
	key := "sk-proj-Pl4nted7Xq3vT8pL2mN9rB5cD7fG1hJ3kWzQ0aE"
	for _, path := range []string{"/v1/cases/" + key, "/v1/cases/" + key + "/openai/v1/chat/completions", "/v1/calls/" + key} {
		var body any
		if strings.HasSuffix(path, "completions") {
			body = sdkRequests(t)[0]
		}
		resp, _ := s.do(map[bool]string{true: "POST", false: "GET"}[body != nil], path, body, nil)
		assert.Equal(t, http.StatusNotFound, resp.StatusCode, path)
	}
	// confighttp's refusal of a Content-Encoding quotes it.
	resp, _ := s.do("POST", "/openai/v1/chat/completions", sdkRequests(t)[0], map[string]string{"Content-Encoding": key})
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	notFound := append(logs.FilterMessageSnippet("no such case").All(), logs.FilterMessageSnippet("no recorded call").All()...)
	assert.Len(t, notFound, 3, "each route logs the id it did not find")
	refused := logs.FilterMessageSnippet("refused before its route").All()
	assert.Len(t, refused, 1)
	notFound = append(notFound, refused...)
	for _, e := range notFound {
		fields := e.ContextMap()
		v, _ := fields["error"].(string)
		if id, ok := fields["call_site_id"].(string); ok {
			v = id
		}
		assert.NotContains(t, v, key, "%q logs the key", e.Message)
		assert.Contains(t, v, "<secret:openai_api_key:", "%q names the value, scrubbed", e.Message)
	}
}

// startReplayWithDebugLog serves a dataset of the OTel events run with its log at debug level
// kept for the test to read.
func startReplayWithDebugLog(t *testing.T) (*server, *observer.ObservedLogs) {
	root := filepath.Join(t.TempDir(), "data")
	writeDataset(t, root, testfixtures.OTelEvents)
	core, logs := observer.New(zapcore.DebugLevel)
	set := extensiontest.NewNopSettings(metadata.Type)
	set.Logger = zap.New(core)
	return startReplayWith(t, root, nil, set, componenttest.NewNopHost()), logs
}
