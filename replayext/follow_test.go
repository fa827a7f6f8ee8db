package replayext

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/callsite"
	"github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/replaycase"
)

// followed picks the recordings of the case a session follows: its current case when that case
// recorded the request, else the first case that recorded it more often than it was made, else
// the last case that recorded it.
func TestFollowedNarrowsRecordingsToTheCaseTheRunFollows(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	const prompt = "the same first call"
	var cases []*replaycase.Case
	for i, times := range []int{1, 2, 1} { // how often each case made the call
		c := syntheticCase(i, 0)
		c.Steps[0].InputMessages[0].Parts[0].Content = prompt
		c.Steps[0].CallSiteID = callsite.FromStep(&c.Steps[0]).ID(nil)
		for n := 1; n < times; n++ {
			again := c.Steps[0]
			again.Index = n
			c.Steps = append(c.Steps, again)
		}
		cases = append(cases, c)
	}
	w, err := dataset.NewWriter(dataset.WriterConfig{Root: root, Staging: root + ".staging", Compression: "zstd", MaxRowsPerFile: 1000, RowGroupRows: 1000})
	require.NoError(t, err)
	_, err = w.Write(cases)
	require.NoError(t, err)
	s := newStore(root, 4)
	added, _, failed := s.refresh(t.Context()).counts()
	require.Empty(t, failed)
	require.Equal(t, 3, added)
	id := cases[0].Steps[0].CallSiteID
	a, b, c := cases[0].CaseID, cases[1].CaseID, cases[2].CaseID

	for _, tc := range []struct {
		name string
		cur  string
		made int
		want []hit
	}{
		{"no current case: the first that recorded it", "", 0, []hit{{a, 0}}},
		{"a current case that did not record it: the first that did", "ffffffffffffffffffffffffffffffff", 0, []hit{{a, 0}}},
		{"made once: the first case that recorded it twice", "", 1, []hit{{b, 0}, {b, 1}}},
		{"made more often than any case recorded it: the last", "", 2, []hit{{c, 0}}},
		{"the current case, however often the request was made", b, 5, []hit{{b, 0}, {b, 1}}},
	} {
		hits, all := s.followed(id, tc.cur, tc.made)
		assert.Equal(t, tc.want, hits, tc.name)
		assert.Equal(t, 4, all, tc.name)
	}
	hits, all := s.followed("cs_00000000000000000000000000000000", "", 0)
	assert.True(t, hits == nil && all == 0, "a request no case recorded")
}

// On a base URL that names no case, a request the followed case recorded is answered from that
// case, also when another case recorded the same request with fewer fields (its
// instrumentation did not record the temperature): the other recording's id, computed over
// its own field set, must not take the session to the other case.
func TestFollowedCaseAnswersWhateverFieldSetOtherCasesRecordedTheRequestWith(t *testing.T) {
	temperature := 0.5
	step := func(prompt, answer string, withTemperature bool) replaycase.Step {
		st := replaycase.Step{Kind: replaycase.StepLLM, ModelConfig: replaycase.ModelConfig{RequestModel: "gpt-4o-mini"},
			InputMessages:  []replaycase.Message{{Role: "user", Parts: []replaycase.Part{{Type: "text", Content: prompt}}}},
			OutputMessages: []replaycase.Message{{Role: "assistant", FinishReason: "stop", Parts: []replaycase.Part{{Type: "text", Content: answer}}}}}
		if withTemperature {
			st.ModelConfig.Temperature = &temperature
		}
		r := callsite.FromStep(&st)
		st.CallSiteFields = r.RecordedFields()
		st.CallSiteID = r.ID(st.CallSiteFields)
		return st
	}
	other, followed := syntheticCase(0, 0), syntheticCase(1, 0) // written in this order: other's field set comes first
	other.Steps = []replaycase.Step{step("the same call", "from the other case", false)}
	followed.Steps = []replaycase.Step{step("the first call", "first", true), step("the same call", "from the followed case", true)}
	for _, c := range []*replaycase.Case{other, followed} {
		for i := range c.Steps {
			c.Steps[i].Index, c.Steps[i].StartTime = i, c.StartTime
		}
	}
	root := filepath.Join(t.TempDir(), "data")
	w, err := dataset.NewWriter(dataset.WriterConfig{Root: root, Staging: root + ".staging", Compression: "zstd", MaxRowsPerFile: 1000, RowGroupRows: 1000})
	require.NoError(t, err)
	_, err = w.Write([]*replaycase.Case{other, followed})
	require.NoError(t, err)
	s := startReplay(t, root, nil)

	session := map[string]string{headerSession: "run-1"}
	for _, want := range []struct{ prompt, answer string }{{"the first call", "first"}, {"the same call", "from the followed case"}} {
		resp, body := s.do("POST", "/openai/v1/chat/completions", map[string]any{"model": "gpt-4o-mini", "temperature": temperature,
			"messages": []any{map[string]any{"role": "user", "content": want.prompt}}}, session)
		require.Equal(t, 200, resp.StatusCode, string(body))
		assert.Equal(t, want.answer, chatAnswer(t, body), want.prompt)
		assert.Equal(t, followed.CaseID, resp.Header.Get("X-Replay-Case-Id"), want.prompt)
	}
}
