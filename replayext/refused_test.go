package replayext

import (
	"net/http"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/casediff"
	"github.com/reprise-dev/reprise/internal/testfixtures"
)

// A request strict replay refuses is logged in the session's divergence log too, marked
// refused, with the paths and finding types a lenient divergence has and never the values: an
// agent that swallows the 404 and carries on leaves no other trace of the call the recording
// never had. The three refusals: a changed request, a request made more often than recorded,
// and a request after the case's last recorded call.
func TestStrictRefusalsAreInTheDivergenceLog(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	cases := writeDataset(t, root, testfixtures.OTelEvents)
	s := startReplay(t, root, nil)
	path := "/v1/cases/" + cases[0].CaseID + "/openai/v1/chat/completions"
	recorded := sdkRequests(t)
	changed := sdkRequests(t)[0]
	changed["messages"].([]any)[1].(map[string]any)["content"] = "What is the weather in Lyon today?"

	h := map[string]string{headerSession: "strict-refusals"}
	resp, body := s.do("POST", path, changed, h)
	require.Equal(t, http.StatusNotFound, resp.StatusCode, string(body))
	resp, body = s.do("GET", "/v1/divergences", nil, h)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	assert.NotContains(t, string(body), "Lyon", "no requested value")
	assert.NotContains(t, string(body), "Paris", "no recorded value")
	divs := divergencesOf(t, s, "strict-refusals")
	require.Len(t, divs, 1)
	d := divs[0]
	assert.True(t, d.Refused)
	assert.False(t, d.Live)
	assert.Empty(t, d.Served, "nothing was served")
	assert.Equal(t, cases[0].CaseID, d.CaseID)
	assert.Equal(t, endpointChat, d.Endpoint)
	assert.Equal(t, []string{"messages[1].content[0].text"}, d.Paths)
	assert.Equal(t, []Finding{{Type: casediff.PromptChanged, Path: "messages[1].content[0].text"}}, d.Findings)
	assert.Empty(t, d.Differences, "values only with local_debug")

	// Every recorded call once, then the first again (more often than recorded), then a changed
	// one past the last recorded call: each is refused and logged, in order.
	for _, req := range recorded {
		resp, body = s.do("POST", path, req, h)
		require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	}
	resp, body = s.do("POST", path, recorded[0], h)
	require.Equal(t, http.StatusNotFound, resp.StatusCode, string(body))
	resp, body = s.do("POST", path, changed, h)
	require.Equal(t, http.StatusNotFound, resp.StatusCode, string(body))
	divs = divergencesOf(t, s, "strict-refusals")
	require.Len(t, divs, 3, "the exact answers are not divergences")
	for _, d := range divs[1:] {
		assert.True(t, d.Refused)
		assert.Empty(t, d.Paths)
		assert.Equal(t, []Finding{{Type: casediff.ModelCallAdded}}, d.Findings)
		assert.Equal(t, cases[0].CaseID, d.CaseID)
	}

	// A tool call the case did not record is refused and logged the same way.
	tool := map[string]string{headerSession: "strict-tool"}
	resp, body = s.do("POST", "/v1/cases/"+cases[0].CaseID+"/tools/get_weather", `{"city":"Lyon"}`, tool)
	require.Equal(t, http.StatusNotFound, resp.StatusCode, string(body))
	divs = divergencesOf(t, s, "strict-tool")
	require.Len(t, divs, 1)
	assert.True(t, divs[0].Refused)
	assert.Equal(t, endpointTool, divs[0].Endpoint)
	assert.NotEmpty(t, divs[0].Findings)
	for _, f := range divs[0].Findings {
		assert.Equal(t, casediff.ToolArgsChanged, f.Type)
	}

	// A lenient divergence is not marked refused: it was served.
	resp, body = s.do("POST", path, changed, map[string]string{headerSession: "lenient", headerMode: ModeLenient.String()})
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	divs = divergencesOf(t, s, "lenient")
	require.Len(t, divs, 1)
	assert.False(t, divs[0].Refused)
}

// Refusals of requests that name no session (each one its own fresh session, which nobody can
// read back) are in the server's refusal log, which `reprise ci` reads from its own server.
func TestRefusalsOfEverySessionAreKeptForTheServer(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	cases := writeDataset(t, root, testfixtures.OTelEvents)
	s := startReplay(t, root, nil)
	path := "/v1/cases/" + cases[0].CaseID + "/openai/v1/chat/completions"
	changed := sdkRequests(t)[0]
	changed["model"] = "gpt-other"

	divs, total, ok := Refusals(s.ext)
	require.True(t, ok)
	assert.Empty(t, divs)
	assert.Zero(t, total)
	for range 2 {
		resp, body := s.do("POST", path, changed, nil)
		require.Equal(t, http.StatusNotFound, resp.StatusCode, string(body))
	}
	resp, body := s.do("POST", path, sdkRequests(t)[0], nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	divs, total, _ = Refusals(s.ext)
	assert.Equal(t, 2, total)
	require.Len(t, divs, 2)
	for _, d := range divs {
		assert.True(t, d.Refused)
		assert.Equal(t, []Finding{{Type: casediff.ModelConfigChanged, Path: "model"}}, d.Findings)
	}

	_, _, ok = Refusals(nil)
	assert.False(t, ok, "not a replay extension")
}
