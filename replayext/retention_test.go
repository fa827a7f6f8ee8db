package replayext

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/replaycase"
)

// Cases whose partition the exporter's retention deleted are neither listed nor replayed after
// the next refresh; the others still are.
func TestStoreForgetsExpiredCases(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	w, err := dataset.NewWriter(dataset.WriterConfig{Root: root, Staging: root + ".staging", Compression: "zstd", MaxRowsPerFile: 100, RowGroupRows: 10})
	require.NoError(t, err)
	var cases []*replaycase.Case
	for i := 0; i < 4; i++ {
		c := syntheticCase(i, 100)
		if i < 2 {
			c.StartTime = c.StartTime.AddDate(-1, 0, 0) // a year old
		}
		cases = append(cases, c)
	}
	_, err = w.Write(cases)
	require.NoError(t, err)
	s := agedStore(t, root, 4)
	_, err = s.get(t.Context(), cases[0].CaseID) // cached before it expires
	require.NoError(t, err)

	_, err = dataset.Expire(root, dataset.Retention{Cases: 180 * 24 * time.Hour}, time.Now())
	require.NoError(t, err)
	_, dropped, _ := s.refresh(t.Context()).counts()
	assert.Equal(t, 2, dropped, "the loaded-cases metric goes down by what retention removed")

	assert.Equal(t, []string{cases[2].CaseID, cases[3].CaseID}, listAll(s))
	for _, c := range cases[:2] {
		assert.False(t, s.has(c.CaseID))
		_, err := s.get(t.Context(), c.CaseID)
		assert.ErrorIs(t, err, errNoCase)
		all := s.callsFor(c.Steps[0].CallSiteID, nil, 10).all
		assert.Zero(t, all)
	}
	for _, c := range cases[2:] {
		got, err := s.get(t.Context(), c.CaseID)
		require.NoError(t, err)
		assert.Equal(t, c.CaseID, got.CaseID)
		all := s.callsFor(c.Steps[0].CallSiteID, nil, 10).all
		assert.Equal(t, 1, all)
	}
}

// A case read under its id in upper-case hex is the same case: it is cached once, by its
// bytes, so that retention removes it under every spelling; and a scoped route serves it with
// the session's cursor of that case.
func TestAnUpperCaseIDNamesTheSameCase(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	w, err := dataset.NewWriter(dataset.WriterConfig{Root: root, Staging: root + ".staging", Compression: "zstd", MaxRowsPerFile: 100, RowGroupRows: 10})
	require.NoError(t, err)
	c := syntheticCase(0xabcdef, 100)
	c.StartTime = c.StartTime.AddDate(-1, 0, 0) // a year old
	_, err = w.Write([]*replaycase.Case{c})
	require.NoError(t, err)
	s := agedStore(t, root, 1)
	upper := strings.ToUpper(c.CaseID)
	got, err := s.get(t.Context(), upper)
	require.NoError(t, err)
	assert.Equal(t, c.CaseID, got.CaseID)

	_, err = dataset.Expire(root, dataset.Retention{Cases: 180 * 24 * time.Hour}, time.Now())
	require.NoError(t, err)
	_, dropped, _ := s.refresh(t.Context()).counts()
	require.Equal(t, 1, dropped)
	for _, id := range []string{c.CaseID, upper} {
		_, err = s.get(t.Context(), id)
		assert.ErrorIs(t, err, errNoCase, "retention removed the case read as %s", id)
	}

	// Lenient: after the recorded first call, a changed second call is compared with (and
	// served as) the case's second call, whatever the spelling of the id.
	root = filepath.Join(t.TempDir(), "data")
	cases := writeDataset(t, root, testfixtures.OTelEvents)
	srv := startReplay(t, root, func(c *Config) { c.Mode = ModeLenient })
	path := "/v1/cases/" + strings.ToUpper(cases[0].CaseID) + "/openai/v1/chat/completions"
	session := map[string]string{headerSession: "upper"}
	resp, body := srv.do("POST", path, sdkRequests(t)[0], session)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	assert.Equal(t, cases[0].CaseID, resp.Header.Get("X-Replay-Case-Id"))
	changed := sdkRequests(t)[1]
	changed["temperature"] = 1.7
	resp, body = srv.do("POST", path, changed, session)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	assert.Equal(t, "true", resp.Header.Get(headerDivergence))
	assert.Equal(t, nthLLMStep(cases[0], 1).CallSiteID, resp.Header.Get("X-Replay-Call-Site-Id"), "the case's next call, not its first again")
}

// A case whose file retention deleted is a 404 on every route, not a 500, from the moment the
// file is gone (before the refresh that forgets it), and listings leave it out; a case the
// index no longer holds when a route reads it is a 404 too.
func TestACaseRemovedMeanwhileIsNotFound(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	cases := writeDataset(t, root, testfixtures.OTelEvents)
	c := cases[0]
	s := startReplay(t, root, func(cfg *Config) { cfg.RefreshInterval = time.Hour }) // no refresh forgets it
	files, err := filepath.Glob(filepath.Join(root, "*", "dt=*", "*.parquet"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		require.NoError(t, os.Remove(f))
	}

	base := "/v1/cases/" + c.CaseID
	changed := sdkRequests(t)[0]
	changed["temperature"] = 1.7
	for _, r := range []struct {
		method, path string
		body         any
	}{
		{"GET", base, nil},
		{"POST", base + "/tools/get_weather", `{"city":"Paris","unit":"celsius"}`},
		{"POST", base + "/retrieval", map[string]string{"query": "weather in Paris"}},
		{"POST", base + "/openai/v1/embeddings", map[string]any{"model": "text-embedding-3-small", "input": "weather"}},
		{"GET", base + "/openai/v1/responses/resp_1", nil},
		{"POST", base + "/openai/v1/chat/completions", sdkRequests(t)[0]}, // recorded: read to answer
		{"POST", base + "/openai/v1/chat/completions", changed},           // read to compare
		{"GET", "/v1/calls/" + nthLLMStep(c, 0).CallSiteID, nil},
	} {
		resp, body := s.do(r.method, r.path, r.body, nil)
		assert.Equal(t, http.StatusNotFound, resp.StatusCode, "%s %s: %s", r.method, r.path, body)
		assert.Contains(t, string(body), "not_found_error", r.path)
	}
	resp, body := s.do("GET", "/v1/cases", nil, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	assert.JSONEq(t, `{"cases":[]}`, string(body), "the listing leaves out what it cannot read any more")

	rec := httptest.NewRecorder()
	_, ok := s.ext.recordedCase(rec, httptest.NewRequest("GET", "/", nil), strings.Repeat("0", 32))
	assert.False(t, ok)
	assert.Equal(t, http.StatusNotFound, rec.Code, "a case the index no longer holds: %s", rec.Body)
}

// agedStore makes every file under root two days old (past retention's guard for files just
// published) and indexes them, checking that want cases were added.
func agedStore(t *testing.T, root string, want int) *store {
	t.Helper()
	old := time.Now().Add(-48 * time.Hour)
	require.NoError(t, filepath.Walk(root, func(p string, _ os.FileInfo, _ error) error { return os.Chtimes(p, old, old) }))
	s := newStore(root, 4)
	added, _, _ := s.refresh(t.Context()).counts()
	require.Equal(t, want, added)
	return s
}
