package replayext

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/reprise-dev/reprise/internal/testfixtures"
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
