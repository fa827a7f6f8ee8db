package replayext

import (
	"net/http"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/reprise-dev/reprise/internal/testfixtures"
)

// reprise's commands take a prefix of a case id (a6a47648), and a base URL built from one named
// no case with the same 404 as an id never recorded: the developer, who had just seen the case
// with `reprise show`, was told it did not exist. The answer says a whole id is needed, without
// quoting the prefix back; a well-formed id that is not recorded gets the plain answer.
func TestAPrefixOfACaseIDIsToldTheWholeIDIsNeeded(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	cases := writeDataset(t, root, testfixtures.OTelEvents)
	s := startReplay(t, root, nil)
	prefix := cases[0].CaseID[:8]
	chat := sdkRequests(t)[0]
	for _, r := range []struct{ method, path string }{
		{"GET", "/v1/cases/" + prefix},
		{"POST", "/v1/cases/" + prefix + "/openai/v1/chat/completions"},
		{"POST", "/v1/cases/" + prefix + "/anthropic/v1/messages"},
	} {
		var body any
		if r.method == "POST" {
			body = chat
		}
		resp, got := s.do(r.method, r.path, body, nil)
		assert.Equal(t, http.StatusNotFound, resp.StatusCode, "%s %s: %s", r.method, r.path, got)
		assert.Contains(t, string(got), "a case id is 32 hex digits", "%s %s", r.method, r.path)
		assert.NotContains(t, string(got), prefix, "%s %s echoes the id", r.method, r.path)
	}
	resp, got := s.do("GET", "/v1/cases/0123456789abcdef0123456789abcdef", nil, nil)
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	assert.NotContains(t, string(got), "32 hex digits", "a whole id is told only that no case has it")
}
