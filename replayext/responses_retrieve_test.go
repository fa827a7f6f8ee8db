package replayext

import (
	"encoding/json"
	"net/http"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/internal/testfixtures"
)

// GET …/responses/{id}?stream=true streams the recorded response as the API does: the events a
// POST that asked to stream gets, from the one after starting_after. The query was ignored and
// the answer was the JSON object, which the openai SDK's retrieve(stream=True) cannot read as
// events. A stream or starting_after the API would refuse is a 400 naming it.
func TestRetrieveStreamsTheRecordedResponse(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	cases := writeDataset(t, root, testfixtures.OTelEvents)
	s := startReplay(t, root, nil)
	base := "/v1/cases/" + cases[0].CaseID + "/openai/v1"
	post := asResponses(t, sdkRequests(t)[0])
	post["stream"] = true
	resp, posted := s.do("POST", base+"/responses", post, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(posted))

	resp, got := s.do("GET", base+"/responses/chatcmpl-1?stream=true", nil, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(got))
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	assert.Equal(t, string(posted), string(got), "the events of the POST that streamed it")

	resp, got = s.do("GET", base+"/responses/chatcmpl-1?stream=true&starting_after=4", nil, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(got))
	var seq []int
	for _, e := range readSSE(t, got) {
		var ev struct {
			SequenceNumber int `json:"sequence_number"`
		}
		require.NoError(t, json.Unmarshal([]byte(e), &ev))
		seq = append(seq, ev.SequenceNumber)
	}
	assert.Equal(t, []int{5, 6}, seq)

	for query, param := range map[string]string{"stream=yes": "stream", "stream=true&starting_after=-1": "starting_after", "starting_after=x": "starting_after"} {
		resp, body := s.do("GET", base+"/responses/chatcmpl-1?"+query, nil, nil)
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode, query)
		assert.Contains(t, string(body), `"param":"`+param+`"`, query)
	}

	// The openai Python SDK reads the stream as it reads the API's.
	python := venvPython(t)
	const script = `
import json, sys, openai
c = openai.OpenAI(base_url=sys.argv[1], api_key="x", max_retries=0)
full = c.responses.retrieve("chatcmpl-1")
events = list(c.responses.retrieve("chatcmpl-1", stream=True))
later = list(c.responses.retrieve("chatcmpl-1", stream=True, starting_after=4))
final = events[-1].response
print(json.dumps({"json": [full.id, full.output[0].call_id, full.output[0].arguments],
    "stream": [final.id, final.output[0].call_id, final.output[0].arguments],
    "last": events[-1].type, "later": [e.sequence_number for e in later]}))
`
	out, err := exec.Command(python, "-c", script, s.base+base).CombinedOutput()
	require.NoError(t, err, "%s", out)
	var read struct {
		JSON, Stream []string
		Last         string
		Later        []int
	}
	require.NoError(t, json.Unmarshal(out, &read), "%s", out)
	assert.Equal(t, read.JSON, read.Stream)
	assert.Equal(t, "call_1_0", read.Stream[1])
	assert.Equal(t, "response.completed", read.Last)
	assert.Equal(t, []int{5, 6}, read.Later)
}

// On the unscoped base URL (/openai/v1) the SDK's retrieve finds a response of the case the
// session was served last, as previous_response_id does there; the route did not exist (404
// page not found, which the SDK raises as NotFoundError).
func TestRetrieveOnTheUnscopedBaseURL(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	writeDataset(t, root, testfixtures.OTelEvents)
	s := startReplay(t, root, nil)
	session := map[string]string{headerSession: "retrieve"}
	resp, body := s.do("POST", "/openai/v1/responses", asResponses(t, sdkRequests(t)[0]), session)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))

	resp, body = s.do("GET", "/openai/v1/responses/chatcmpl-1", nil, session)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	assert.Contains(t, string(body), `"call_id":"call_1_0"`)
	resp, body = s.do("GET", "/openai/v1/responses/chatcmpl-1?stream=true", nil, session)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))

	// A session that has been served nothing has no case to look in: the API's 404, in its shape.
	resp, body = s.do("GET", "/openai/v1/responses/chatcmpl-1", nil, map[string]string{headerSession: "other"})
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	assert.Contains(t, string(body), `"type":"not_found_error"`)
}
