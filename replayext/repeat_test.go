package replayext

import (
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/casediff"
	"github.com/reprise-dev/reprise/internal/testfixtures"
)

// divergencesOf is a session's divergence log.
func divergencesOf(t *testing.T, s *server, session string) []Divergence {
	t.Helper()
	return divergenceLogOf(t, s, session).Divergences
}

// A request the case recorded once, made twice in a session, is the run making a call the
// recording did not: never a silent repeat of the recorded answer. Strict refuses it, lenient
// serves the recording again marked and logged as a divergence (model_call_added), hybrid
// answers it live; another session still replays it.
func TestARequestMadeMoreOftenThanRecordedIsADivergence(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	cases := writeDataset(t, root, testfixtures.OTelEvents)
	u := startUpstream(t)
	s := hybridServer(t, root, u)
	c := cases[0]
	path := "/v1/cases/" + c.CaseID + "/openai/v1/chat/completions"
	req := sdkRequests(t)[0]
	twice := func(session, mode string) (first, second *http.Response, firstBody, secondBody []byte) {
		h := map[string]string{headerSession: session, headerMode: mode}
		first, firstBody = s.do("POST", path, req, h)
		require.Equal(t, http.StatusOK, first.StatusCode, string(firstBody))
		assert.Empty(t, first.Header.Get(headerDivergence), "%s: the first is an exact replay", mode)
		second, secondBody = s.do("POST", path, req, h)
		return first, second, firstBody, secondBody
	}

	_, second, _, body := twice("strict", "strict")
	assert.Equal(t, http.StatusNotFound, second.StatusCode, string(body))
	assert.Contains(t, string(body), "already served every recording of this model call")
	assert.Contains(t, string(body), `"type":"model_call_added"`)

	first, second, want, body := twice("lenient", "lenient")
	require.Equal(t, http.StatusOK, second.StatusCode, string(body))
	assert.Equal(t, "true", second.Header.Get(headerDivergence), "a repeat is visible")
	assert.Equal(t, string(want), string(body), "lenient serves the recording again")
	divs := divergencesOf(t, s, "lenient")
	require.Len(t, divs, 1, "logged once")
	assert.Equal(t, c.CaseID, divs[0].CaseID)
	assert.Equal(t, first.Header.Get("X-Replay-Call-Site-Id"), divs[0].Served)
	assert.Equal(t, []Finding{{Type: casediff.ModelCallAdded}}, divs[0].Findings)

	_, second, _, body = twice("hybrid", "hybrid")
	require.Equal(t, http.StatusOK, second.StatusCode, string(body))
	assert.Equal(t, "true", second.Header.Get(headerLive))
	assert.Equal(t, 1, u.count(), "the repeat, and only it, went to the upstream")
	divs = divergencesOf(t, s, "hybrid")
	require.Len(t, divs, 1)
	assert.True(t, divs[0].Live)
	assert.Equal(t, []Finding{{Type: casediff.ModelCallAdded}}, divs[0].Findings)

	resp, body := s.do("POST", path, req, map[string]string{headerSession: "another", headerMode: "strict"})
	assert.Equal(t, http.StatusOK, resp.StatusCode, "another session starts afresh: %s", body)
}

// The same holds for a tool call: a repeat beyond the recorded ones is tool_call_added.
func TestAToolCallMadeMoreOftenThanRecordedIsADivergence(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	cases := writeDataset(t, root, testfixtures.OTelEvents)
	s := startReplay(t, root, nil)
	c := cases[0]
	require.NotEmpty(t, c.ToolCalls)
	tc := c.ToolCalls[0]
	recorded := 0
	for _, other := range c.ToolCalls {
		if other.Name == tc.Name && other.Arguments == tc.Arguments {
			recorded++
		}
	}
	path := "/v1/cases/" + c.CaseID + "/tools/" + tc.Name
	for mode, want := range map[string]int{"strict": http.StatusNotFound, "lenient": http.StatusOK} {
		h := map[string]string{headerSession: "tool-" + mode, headerMode: mode}
		for i := range recorded {
			resp, body := s.do("POST", path, tc.Arguments, h)
			require.Equal(t, http.StatusOK, resp.StatusCode, "%s %d: %s", mode, i, body)
			assert.Empty(t, resp.Header.Get(headerDivergence))
		}
		resp, body := s.do("POST", path, tc.Arguments, h)
		assert.Equal(t, want, resp.StatusCode, "%s: %s", mode, body)
	}
	divs := divergencesOf(t, s, "tool-lenient")
	require.Len(t, divs, 1)
	assert.Equal(t, []Finding{{Type: casediff.ToolCallAdded}}, divs[0].Findings)
	assert.Equal(t, tc.ID, divs[0].Served)
}

// An exact answer that could not be sent (its case could not be read in time: a 504, which the
// SDKs retry) is not counted as served: the retry gets it, and not as a repeat.
func TestARetryAfterAFailedReadGetsTheSameRecording(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	cases := writeDataset(t, root, testfixtures.OTelEvents)
	b, s := startStallableReplay(t, root)
	path := "/v1/cases/" + cases[0].CaseID + "/openai/v1/chat/completions"
	h := map[string]string{headerSession: "retry"}
	req := sdkRequests(t)[0]

	shortReads(s)
	b.stall.Store(true)
	resp, body := s.do("POST", path, req, h)
	require.Equal(t, http.StatusGatewayTimeout, resp.StatusCode, string(body))
	b.stall.Store(false)
	require.Eventually(t, func() bool { // a read may outlast 300 ms under -race: each 504 is given back too
		resp, body = s.do("POST", path, req, h)
		return resp.StatusCode != http.StatusGatewayTimeout
	}, 10*time.Second, 50*time.Millisecond)
	require.Equal(t, http.StatusOK, resp.StatusCode, "the retry is served: %s", body)
	assert.Empty(t, resp.Header.Get(headerDivergence), "as the exact answer")

	resp, body = s.do("POST", path, req, h)
	assert.Equal(t, http.StatusNotFound, resp.StatusCode, "served once, then a repeat: %s", body)
}

// On the base URL that names no case, a session follows one run: a request the case it
// follows recorded once, made twice, is a repeat even when another case recorded the same
// request. Before, the other case's recording was served as an exact answer, unflagged.
func TestARepeatOnTheUnscopedRouteIsADivergenceWhenAnotherCaseRecordedItToo(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	cases := writeDataset(t, root, testfixtures.OTelEvents, testfixtures.OTelEvents)
	require.Len(t, cases, 2, "two runs that made the same calls")
	s := startReplay(t, root, nil)
	req := sdkRequests(t)[0]
	const path = "/openai/v1/chat/completions"

	strict := map[string]string{headerSession: "strict", headerMode: "strict"}
	first, body := s.do("POST", path, req, strict)
	require.Equal(t, http.StatusOK, first.StatusCode, string(body))
	followed := first.Header.Get("X-Replay-Case-Id")
	second, body := s.do("POST", path, req, strict)
	assert.Equal(t, http.StatusNotFound, second.StatusCode, "not the other case's recording: %s", body)
	assert.Contains(t, string(body), "already served every recording of this model call (case "+followed+")")

	lenient := map[string]string{headerSession: "lenient", headerMode: "lenient"}
	first, want := s.do("POST", path, req, lenient)
	require.Equal(t, http.StatusOK, first.StatusCode, string(want))
	second, body = s.do("POST", path, req, lenient)
	require.Equal(t, http.StatusOK, second.StatusCode, string(body))
	assert.Equal(t, "true", second.Header.Get(headerDivergence), "the repeat is visible")
	assert.Equal(t, followed, second.Header.Get("X-Replay-Case-Id"), "served again from the case the run follows")
	assert.Equal(t, string(want), string(body))
	divs := divergencesOf(t, s, "lenient")
	require.Len(t, divs, 1)
	assert.Equal(t, []Finding{{Type: casediff.ModelCallAdded}}, divs[0].Findings)

	resp, body := s.do("POST", path, req, map[string]string{headerSession: "another", headerMode: "strict"})
	assert.Equal(t, http.StatusOK, resp.StatusCode, "another session starts afresh: %s", body)
}
