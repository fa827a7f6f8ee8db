package replayext

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/internal/testfixtures"
)

// A session's divergence log past its bound keeps its first entries, where the run left the
// recording, and counts every entry in total: it kept the last ones and dropped the first
// without a sign, so a client that marks what it read by the log's length (reprise_pytest)
// saw no new entry once the log was full, and a refusal after that went unnoticed.
func TestADivergenceLogPastItsBoundKeepsTheFirstAndCountsTheRest(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	cases := writeDataset(t, root, testfixtures.OTelEvents)
	s := startReplay(t, root, nil)
	path := "/v1/cases/" + cases[0].CaseID + "/openai/v1/chat/completions"
	changed := sdkRequests(t)[0]
	changed["temperature"] = 1.7
	h := map[string]string{headerSession: "loop"}

	// The first divergence is a lenient answer, every later one a strict refusal.
	resp, body := s.do("POST", path, changed, map[string]string{headerSession: "loop", headerMode: "lenient"})
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	for range maxDivergencesPerSession {
		resp, body = s.do("POST", path, changed, h)
		require.Equal(t, http.StatusNotFound, resp.StatusCode, string(body))
	}
	log := divergenceLogOf(t, s, "loop")
	require.Len(t, log.Divergences, maxDivergencesPerSession)
	assert.False(t, log.Divergences[0].Refused, "the first divergence, the lenient answer, is kept")
	assert.NotEmpty(t, log.Divergences[0].Served)
	assert.Equal(t, maxDivergencesPerSession+1, log.Total, "every divergence is counted")

	// A refusal after a read of the full log shows in the count.
	resp, body = s.do("POST", path, changed, h)
	require.Equal(t, http.StatusNotFound, resp.StatusCode, string(body))
	assert.Equal(t, maxDivergencesPerSession+2, divergenceLogOf(t, s, "loop").Total)
	assert.Equal(t, 0, divergenceLogOf(t, s, "no-such-session").Total)
}

// divergenceLog is the answer of GET /v1/divergences.
type divergenceLog struct {
	Divergences []Divergence
	Total       int
}

func divergenceLogOf(t *testing.T, s *server, session string) divergenceLog {
	t.Helper()
	resp, body := s.do("GET", "/v1/divergences?session="+session, nil, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	var out divergenceLog
	require.NoError(t, json.Unmarshal(body, &out))
	return out
}
