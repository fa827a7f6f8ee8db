package replayext

import (
	"encoding/json"
	"net/http"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/replaycase"
)

// An embeddings request that asks for a vector length (dimensions) is answered only by a
// recording whose vectors have that length. It was ignored: a request for 2 dimensions got the
// recorded 3-dimension vectors, which the real API never returns for it. A dimensions the API
// refuses is a 400 naming it.
func TestEmbeddingsDimensionsMustMatchTheRecordedVectors(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	c := runThrough(t, root, withEmbeddingSpan(t, nil)) // vectors of 3 dimensions
	require.Equal(t, replaycase.StatusAccepted, c.Status, c.Reasons)
	s := startReplay(t, root, nil)
	scoped := "/v1/cases/" + c.CaseID + "/openai/v1/embeddings"
	request := func(dimensions any) map[string]any {
		return map[string]any{"model": "text-embedding-3-small", "input": []string{"weather in Paris", "weather in Lyon"}, "dimensions": dimensions}
	}

	resp, body := s.do("POST", scoped, request(3), map[string]string{headerSession: "three"})
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	resp, body = s.do("POST", scoped, request(nil), map[string]string{headerSession: "unasked"})
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))

	resp, body = s.do("POST", scoped, request(2), map[string]string{headerSession: "two"})
	require.Equal(t, http.StatusNotFound, resp.StatusCode, string(body))
	var miss struct {
		Error struct{ Paths []string }
	}
	require.NoError(t, json.Unmarshal(body, &miss))
	assert.Equal(t, []string{"dimensions"}, miss.Error.Paths)

	for _, bad := range []any{0, -1, 1.5, "3"} {
		resp, body = s.do("POST", scoped, request(bad), nil)
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "%v: %s", bad, body)
		assert.Contains(t, string(body), `"param":"dimensions"`, bad)
	}

	// The openai Python SDK gets the recorded vectors for 3 and a NotFoundError for 2.
	python := venvPython(t)
	const script = `
import sys, openai
c = openai.OpenAI(base_url=sys.argv[1], api_key="x", max_retries=0)
texts = ["weather in Paris", "weather in Lyon"]
print(len(c.embeddings.create(model="text-embedding-3-small", input=texts, dimensions=3).data[0].embedding))
try:
    c.embeddings.create(model="text-embedding-3-small", input=texts, dimensions=2, extra_headers={"X-Replay-Session": "sdk-two"})
    print("served")
except openai.NotFoundError:
    print("not found")
`
	out, err := exec.Command(python, "-c", script, s.base+"/v1/cases/"+c.CaseID+"/openai/v1").CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Equal(t, "3\nnot found\n", string(out))
}
