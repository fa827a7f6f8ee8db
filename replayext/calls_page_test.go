package replayext

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/internal/testdataset"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/internal/testpipeline"
	"github.com/reprise-dev/reprise/replaycase"
)

// A call every run makes is recorded in every case: GET /v1/calls/{id} answers one page of its
// occurrences (limit, page_token, next_page_token), never all of them at once.
func TestCallOccurrencesArePaged(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	cases := writeDataset(t, root, testfixtures.OTelEvents, testfixtures.OTelEvents, testfixtures.OTelEvents)
	s := startReplay(t, root, nil)
	callID := cases[0].Steps[1].CallSiteID
	page := func(q string) ([]string, string) { return occurrencesPage(t, s, callID, q) }
	all, last := page("")
	require.Len(t, all, 3, "the same call in three cases")
	assert.Empty(t, last)
	first, next := page("?limit=2")
	assert.Equal(t, all[:2], first)
	require.NotEmpty(t, next)
	rest, last := page("?limit=2&page_token=" + next)
	assert.Equal(t, all[2:], rest)
	assert.Empty(t, last)
	resp, _ := s.do("GET", "/v1/calls/"+callID+"?limit=0", nil, nil)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
}

// A next_page_token of the occurrences names the last one its page listed: an occurrence that
// retention deletes from a page already read moved every later one a place up, and the next
// page skipped one that was still there (it was an offset). An offset is refused.
func TestANextPageOfOccurrencesSkipsNoneWhenAnEarlierOneIsDeleted(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	files := map[string][]string{} // case id → its files
	seen := map[string]bool{}
	var callID string
	for i := range 3 {
		written := writeRun(t, root, testfixtures.OTelEvents, i) // a file of its own
		all, err := filepath.Glob(filepath.Join(root, "*", "dt=*", "*.parquet"))
		require.NoError(t, err)
		for _, f := range all {
			if !seen[f] {
				seen[f] = true
				files[written[0].CaseID] = append(files[written[0].CaseID], f)
			}
		}
		callID = written[0].Steps[1].CallSiteID
	}
	require.Len(t, files, 3)
	s := startReplay(t, root, func(c *Config) { c.RefreshInterval = time.Hour }) // refreshed below
	page := func(q string) ([]string, string) { return occurrencesPage(t, s, callID, q) }
	all, _ := page("")
	require.Len(t, all, 3)
	got, next := page("?limit=1")
	for _, f := range files[got[0]] {
		require.NoError(t, os.Remove(f))
	}
	require.Equal(t, 1, s.ext.store.refresh(context.Background()).dropped)
	for next != "" {
		var p []string
		p, next = page("?limit=1&page_token=" + next)
		got = append(got, p...)
	}
	assert.ElementsMatch(t, all, got, "every occurrence listed once, the deleted one before it went")

	resp, _ := s.do("GET", "/v1/calls/"+callID+"?page_token=1", nil, nil)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "an offset")
}

// writeRun writes one run into root, with the trace id of the i-th run of writeDataset, in a
// file of its own.
func writeRun(t *testing.T, root, run string, i int) []*replaycase.Case {
	exp := testdataset.Writer(t, root, "zstd")
	td := testfixtures.Traces(t, run)
	testfixtures.WithTraceID(td, plog.NewLogs(), i)
	cases := testpipeline.RunTraces(t, exp, []string{run}, []ptrace.Traces{td})
	require.NoError(t, exp.Shutdown(context.Background()))
	return cases
}

// occurrencesPage is one page of GET /v1/calls/{callID}: its occurrences' case ids and its
// next_page_token.
func occurrencesPage(t *testing.T, s *server, callID, query string) (caseIDs []string, next string) {
	t.Helper()
	return listedPage(t, s, "/v1/calls/"+callID+query)
}
