package replayext

import (
	"fmt"
	"net/http"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"weak"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/callsite"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/replaycase"
	"github.com/reprise-dev/reprise/wireapi"
)

// A memo holds at most memoEntries entries and memoBytes bytes, and nothing larger than
// memoMaxEntry.
func TestMemoIsBounded(t *testing.T) {
	m := newMemo[int, int]()
	for i := range 3 * memoEntries {
		m.put(i, i, 1)
		require.LessOrEqual(t, len(m.entries), memoEntries)
	}
	v, ok := m.get(3*memoEntries - 1)
	assert.True(t, ok, "the last entry put is there")
	assert.Equal(t, 3*memoEntries-1, v)
	for i := range 3 * memoBytes / memoMaxEntry {
		m.put(i, i, memoMaxEntry)
		require.LessOrEqual(t, m.bytes, memoBytes)
	}
	m.put(-1, -1, memoMaxEntry+1)
	_, ok = m.get(-1)
	assert.False(t, ok, "larger than an entry may be")
}

func TestBodyMemoSkipsLargeBodies(t *testing.T) {
	m := newBodyMemo[int]()
	small, large := []byte(`{"model":"m"}`), []byte(strings.Repeat(" ", memoMaxEntry+1))
	m.put(small, 1)
	m.put(large, 2)
	_, ok := m.get(small)
	assert.True(t, ok)
	_, ok = m.get(large)
	assert.False(t, ok)
}

// The three model APIs answer a repeated body alike, from their memos: the answer rendered
// once per recorded step and API, under the step's case id and position.
func TestEveryModelAPIRemembersItsAnswers(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	cases := writeDataset(t, root, testfixtures.OTelEvents)
	s := startReplay(t, root, nil)
	chat := sdkRequests(t)[0]
	prefix := "/v1/cases/" + cases[0].CaseID
	for _, api := range []struct {
		name, path string
		body       map[string]any
	}{
		{"chat", prefix + "/openai/v1/chat/completions", chat},
		{"responses", prefix + "/openai/v1/responses", asResponses(t, chat)},
		{"messages", prefix + "/anthropic/v1/messages", asAnthropic(chat)},
	} {
		var first []byte
		for i := range 3 {
			resp, body := s.do("POST", api.path, api.body, map[string]string{headerSession: fmt.Sprint(api.name, i)})
			require.Equal(t, http.StatusOK, resp.StatusCode, "%s: %s", api.name, body)
			if i == 0 {
				first = body
			}
			assert.Equal(t, string(first), string(body), api.name)
		}
		remembered, ok := s.ext.answers.get(answerKey{step: hit{cases[0].CaseID, 0}, api: api.name})
		require.True(t, ok, "%s: the answer is remembered under its step's case and position", api.name)
		assert.Equal(t, string(first), string(remembered), api.name)
	}
	assert.Equal(t, 1, len(s.ext.chatRequests.m.entries))
	assert.Equal(t, 1, len(s.ext.responsesRequests.m.entries))
	assert.Equal(t, 1, len(s.ext.messagesRequests.m.entries))
}

// A remembered answer does not keep its case in memory: once the case cache lets the case go,
// the garbage collector frees it (a memo keyed by the step's address kept every case it had
// answered from).
func TestRememberedAnswersDoNotKeepCases(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	cases := writeDataset(t, root, testfixtures.OTelEvents, testfixtures.Traceloop)
	s := startReplay(t, root, func(c *Config) { c.CaseCacheSize = 1 })
	var id string // the case the request replays
	for _, c := range cases {
		if resp, _ := s.do("POST", "/v1/cases/"+c.CaseID+"/openai/v1/chat/completions", sdkRequests(t)[0], nil); resp.StatusCode == http.StatusOK {
			id = c.CaseID
		}
	}
	require.NotEmpty(t, id)
	require.Greater(t, len(cases), 1)
	c, err := s.ext.store.get(t.Context(), id)
	require.NoError(t, err)
	served := weak.Make(&c.Steps[0]) // the steps, which a remembered *Step would point into
	c = nil
	for _, other := range cases {
		if other.CaseID != id {
			_, err := s.ext.store.get(t.Context(), other.CaseID) // the cache of one case now holds another
			require.NoError(t, err)
		}
	}
	_, ok := s.ext.answers.get(answerKey{step: hit{id, 0}, api: "chat"})
	require.True(t, ok)
	runtime.GC()
	runtime.GC()
	assert.Nil(t, served.Value(), "the steps the answer was rendered from are freed")
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
	st, err := s.ext.store.llmStep(t.Context(), hit{cases[0].CaseID, 0})
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

// Request bodies are read into reused buffers: what the memos keep of one body survives the
// next bodies being read into the same buffer.
func TestRememberedBodiesSurviveBufferReuse(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	cases := writeDataset(t, root, testfixtures.OTelEvents)
	s := startReplay(t, root, nil)
	path := "/v1/cases/" + cases[0].CaseID + "/openai/v1/chat/completions"
	requests := sdkRequests(t)
	require.Len(t, requests, 2)
	first := make([]string, len(requests))
	for round := range 20 {
		for i, req := range requests {
			resp, body := s.do("POST", path, req, nil) // no session: each request starts one
			require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
			if round == 0 {
				first[i] = string(body)
			}
			require.Equal(t, first[i], string(body), "round %d, request %d", round, i)
		}
	}
	assert.NotEqual(t, first[0], first[1])
}
