package replayext

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/replaycase"
)

// A case re-driven out of the quarantine comes back with its id in a later file, accepted and
// with the content the fixed normalizer gives. That row is the case's current one, the one
// `reprise ls`, `show`, `diff` and `ci` read (the file whose name sorts last), and replay
// serves it, whether the two copies are indexed by the same refresh or the re-driven one by a
// later refresh: replay kept the first copy it indexed, and went on serving the quarantined
// row (its status and its answers) after the re-drive.
func TestAReDrivenCaseIsServedFromItsCurrentRow(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	w, err := dataset.NewWriter(dataset.WriterConfig{Root: root, Staging: root + ".staging", Compression: "zstd", MaxRowsPerFile: 100, RowGroupRows: 100})
	require.NoError(t, err)
	versions := func(i int) (quarantined, redriven *replaycase.Case) {
		quarantined, redriven = syntheticCase(i, 100), syntheticCase(i, 100)
		quarantined.Status, quarantined.Reasons = replaycase.StatusQuarantined, []replaycase.Reason{{Code: replaycase.ReasonNoModelOutput}}
		quarantined.Steps[0].OutputMessages[0].Parts[0].Content = "the quarantined answer"
		redriven.Steps[0].OutputMessages[0].Parts[0].Content = "the re-driven answer"
		return quarantined, redriven
	}
	write := func(c *replaycase.Case) {
		_, err := w.Write([]*replaycase.Case{c})
		require.NoError(t, err)
		time.Sleep(2 * time.Millisecond) // the next file's UUIDv7 name sorts after this one's
	}
	q, r := versions(1)
	write(q)
	write(r)
	q, r = versions(2)
	_, err = w.Write([]*replaycase.Case{q, r}) // one batch: to quarantine/ and cases/ at once
	require.NoError(t, err)
	// Re-driven and quarantined again (another reason): both rows are in quarantine/.
	q, again := versions(4)
	again.Status, again.Reasons = replaycase.StatusQuarantined, []replaycase.Reason{{Code: replaycase.ReasonNoInputMessages}}
	write(q)
	write(again)

	s := startReplay(t, root, nil)
	current := func(i int) {
		t.Helper()
		currentIs(t, s, i, replaycase.StatusAccepted)
	}
	current(1)
	current(2)
	currentIs(t, s, 4, replaycase.StatusQuarantined)

	// Re-driven after the server indexed (and cached) the quarantined row.
	q, r = versions(3)
	write(q)
	require.Eventually(t, func() bool { return s.ext.store.has(q.CaseID) }, 5*time.Second, 20*time.Millisecond)
	resp, body := s.do("GET", "/v1/cases/"+q.CaseID, nil, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	assert.Equal(t, "the quarantined answer", answerOf(t, s, q, "before"))
	write(r)
	time.Sleep(500 * time.Millisecond) // a few refreshes
	current(3)
	assert.Equal(t, "the re-driven answer", answerOf(t, s, r, "after"), "not the answer rendered from the old row")
}

// answerOf is the text replay answers to the recorded request of synthetic case c, in session.
func answerOf(t *testing.T, s *server, c *replaycase.Case, session string) string {
	t.Helper()
	req := map[string]any{"model": "gpt-4o-mini", "messages": []any{map[string]any{"role": "user", "content": c.Steps[0].InputMessages[0].Parts[0].Content}}}
	resp, body := s.do("POST", "/v1/cases/"+c.CaseID+"/openai/v1/chat/completions", req, map[string]string{headerSession: session})
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	var answer struct {
		Choices []struct{ Message struct{ Content string } }
	}
	require.NoError(t, json.Unmarshal(body, &answer))
	require.Len(t, answer.Choices, 1)
	return answer.Choices[0].Message.Content
}

// currentIs checks that case i is served from its re-driven row, with status.
func currentIs(t *testing.T, s *server, i int, status replaycase.Status) {
	t.Helper()
	id := fmt.Sprintf("%032x", i)
	resp, body := s.do("GET", "/v1/cases/"+id, nil, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	var c replaycase.Case
	require.NoError(t, json.Unmarshal(body, &c))
	assert.Equal(t, status, c.Status, "case %d", i)
	assert.Equal(t, "the re-driven answer", c.Steps[0].OutputMessages[0].Parts[0].Content, "case %d", i)
	resp, body = s.do("GET", "/v1/cases?status="+string(status), nil, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	assert.Contains(t, string(body), id, "case %d is listed as %s", i, status)
}
