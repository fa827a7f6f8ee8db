package replayext

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/callsite"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/replaycase"
	"github.com/reprise-dev/reprise/wireapi"
)

func TestMemoIsBounded(t *testing.T) {
	m := newMemo[string, int](2)
	m.put("a", 1)
	m.put("b", 2)
	m.put("c", 3)
	assert.LessOrEqual(t, len(m.entries), 2)
	v, ok := m.get("c")
	assert.True(t, ok)
	assert.Equal(t, 3, v)
}

func TestBodyMemoSkipsLargeBodies(t *testing.T) {
	m := newBodyMemo[int]()
	small, large := []byte(`{"model":"m"}`), []byte(strings.Repeat(" ", memoMaxBody+1))
	m.put(small, 1)
	m.put(large, 2)
	_, ok := m.get(small)
	assert.True(t, ok)
	_, ok = m.get(large)
	assert.False(t, ok)
}

// A body answered from the memo gets the same answer as the first time, in every session and
// concurrently; what the memo keeps is never modified by a request.
func TestRepeatedChatRequestAnsweredAlike(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	cases := writeDataset(t, root, testfixtures.OTelEvents)
	s := startReplay(t, root, nil)
	path := "/v1/cases/" + cases[0].CaseID + "/openai/v1/chat/completions"
	request := sdkRequests(t)[0]

	first, want := s.do("POST", path, request, map[string]string{headerSession: "first"})
	require.Equal(t, http.StatusOK, first.StatusCode, string(want))
	st, err := s.ext.store.llmStep(hit{cases[0].CaseID, 0})
	require.NoError(t, err)
	assert.Equal(t, string(wireapi.ChatResponseJSON(st)), string(want))

	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, got := s.do("POST", path, request, map[string]string{headerSession: fmt.Sprint("s", i)})
			assert.Equal(t, http.StatusOK, resp.StatusCode)
			assert.Equal(t, string(want), string(got))
			assert.Equal(t, first.Header.Get("X-Replay-Call-Site-Id"), resp.Header.Get("X-Replay-Call-Site-Id"))
		}()
	}
	wg.Wait()

	// The same messages asked as a stream are still streamed (a different body, its own entry).
	streamed := map[string]any{"stream": true}
	for k, v := range request {
		streamed[k] = v
	}
	resp, body := s.do("POST", path, streamed, map[string]string{headerSession: "stream"})
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	assert.True(t, strings.HasSuffix(string(body), "data: [DONE]\n\n"))

	// A remembered body that matches nothing is still refused each time.
	other := map[string]any{}
	for k, v := range request {
		other[k] = v
	}
	other["model"] = "another-model"
	for range 2 {
		resp, body := s.do("POST", path, other, map[string]string{headerSession: "miss"})
		assert.Equal(t, http.StatusNotFound, resp.StatusCode, string(body))
	}
}

// A remembered call-site id is the one computed afresh, for each field set, in any order.
func TestCallSiteIDsRememberPerFieldSet(t *testing.T) {
	temperature := 0.5
	req := callsite.Request{Model: "m", Params: replaycase.ModelConfig{RequestModel: "m", Temperature: &temperature},
		Messages: []replaycase.Message{{Role: "user", Parts: []replaycase.Part{{Type: "text", Content: "hi"}}}}}
	sets := [][]string{{callsite.FieldTemperature}, nil, {callsite.FieldTemperature, callsite.FieldSeed}}
	ids := &callSiteIDs{}
	for _, n := range []int{2, 0, 1, 2, 0} {
		assert.Equal(t, req.ID(sets[n]), ids.of(req, n, sets[n]), "field set %d", n)
	}
	assert.NotEqual(t, ids.of(req, 0, sets[0]), ids.of(req, 1, sets[1]))
	var none *callSiteIDs
	assert.Equal(t, req.ID(sets[0]), none.of(req, 0, sets[0]))
}
