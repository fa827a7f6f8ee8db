package replayext

import (
	"net/http"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/internal/testfixtures"
)

// "call:<call id>" was how the Responses endpoint looked up the response that made a tool call
// (now a lookup of its own kind, wireapi.Recorded's byCall), never a response id: as
// previous_response_id or in GET …/responses/{id} it is unknown, as the API answers an id it
// never issued. It was resolved to the response that called the tool: a request the API refuses
// got a recorded answer, and GET served a response under another id.
func TestACallLookupIsNoResponseID(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	cases := writeDataset(t, root, testfixtures.OTelEvents)
	s := startReplay(t, root, nil)
	base := "/v1/cases/" + cases[0].CaseID + "/openai/v1/responses"
	second := asResponses(t, sdkRequests(t)[1])
	items := second["input"].([]any)

	// The recorded id continues the conversation (as TestResponsesReplaysARecordedConversation).
	req := map[string]any{"model": second["model"], "max_output_tokens": second["max_output_tokens"], "temperature": second["temperature"],
		"tools": second["tools"], "instructions": second["instructions"], "input": items[len(items)-1:], "previous_response_id": "chatcmpl-1"}
	resp, body := s.do("POST", base, req, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))

	req["previous_response_id"] = "call:call_1_0"
	resp, body = s.do("POST", base, req, map[string]string{headerSession: "lookup"})
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode, string(body))
	assert.Contains(t, string(body), `"param":"previous_response_id"`)

	resp, _ = s.do("GET", base+"/chatcmpl-1", nil, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	resp, body = s.do("GET", base+"/call:call_1_0", nil, nil)
	assert.Equal(t, http.StatusNotFound, resp.StatusCode, string(body))
}
