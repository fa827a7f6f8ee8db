package replayext

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
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
// occurrences (limit, page_token, next_page_token), never all of them at once. A page_token
// that is no next_page_token of the listing, "after_<index>_<n>", is a 400 naming it.
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

	index := strconv.FormatUint(s.ext.store.generation, 16)
	for _, token := range []string{"after_", "after_x", "after_" + index, "after_" + index + "_", "after_" + index + "_x", "after_" + index + "_4294967296", "after_" + index + "_0_0", "after_x_0", "_" + index + "_0"} {
		resp, body := s.do("GET", "/v1/calls/"+callID+"?page_token="+token, nil, nil)
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, "page_token %s: %s", token, body)
		var e struct {
			Error struct{ Message, Param string }
		}
		require.NoError(t, json.Unmarshal(body, &e), string(body))
		assert.Equal(t, "page_token", e.Error.Param, token)
		assert.Equal(t, "page_token must be a next_page_token of this listing", e.Error.Message, token)
	}
}

// A next_page_token of the occurrences names the last one its page listed: an occurrence that
// retention deletes from a page already read moved every later one a place up, and the next
// page skipped one that was still there (it was an offset). An offset is refused.
func TestANextPageOfOccurrencesSkipsNoneWhenAnEarlierOneIsDeleted(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	callID, files := writeRunsOfOneCall(t, root, 3)
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

// A next_page_token of the occurrences holds for the index that gave it: a restart numbers them
// again, and the number a token named, read by the new index, named another occurrence: the
// next page skipped one (or listed one again) with a 200. The token of another index is a 400
// naming page_token that says to list again, as is one of the form before 2026-12-07,
// "after_<n>", which named no index.
func TestACallsPageTokenFromBeforeARestartIsRefused(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	callID, files := writeRunsOfOneCall(t, root, 3)
	before := startReplay(t, root, nil)
	first, next := occurrencesPage(t, before, callID, "?limit=1")
	require.Len(t, first, 1)
	require.NotEmpty(t, next)
	// Retention deletes the case of the page read, and the server restarts: the occurrences
	// left are numbered from the start again.
	for _, f := range files[first[0]] {
		require.NoError(t, os.Remove(f))
	}
	after := startReplay(t, root, nil)
	left, _ := occurrencesPage(t, after, callID, "")
	require.Len(t, left, 2)

	for _, token := range []string{next, "after_0", "after_1"} {
		resp, body := after.do("GET", "/v1/calls/"+callID+"?limit=1&page_token="+token, nil, nil)
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, "page_token %s: %s", token, body)
		var e struct {
			Error struct{ Message, Type, Param string }
		}
		require.NoError(t, json.Unmarshal(body, &e), string(body))
		assert.Equal(t, "invalid_request_error", e.Error.Type, string(body))
		assert.Equal(t, "page_token", e.Error.Param, string(body))
		assert.Contains(t, e.Error.Message, "restarted", string(body))
		assert.Contains(t, e.Error.Message, "first page", string(body))
	}
	// Listed again from the first page, every occurrence left is there once.
	var got []string
	for page, next := occurrencesPage(t, after, callID, "?limit=1"); ; page, next = occurrencesPage(t, after, callID, "?limit=1&page_token="+next) {
		got = append(got, page...)
		if next == "" {
			break
		}
	}
	assert.Equal(t, left, got)
}

// writeRunsOfOneCall writes n runs of one agent into root, each in a file of its own, and
// returns the call-site id of a call they all made and each case's files.
func writeRunsOfOneCall(t *testing.T, root string, n int) (callID string, files map[string][]string) {
	files = map[string][]string{} // case id → its files
	seen := map[string]bool{}
	for i := range n {
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
	require.Len(t, files, n)
	return callID, files
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
