package replayext

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/internal/testfixtures"
)

// A page_token marks where its page ended, not how many cases came before it: a case of a page
// already read that retention deletes meanwhile moved every later case one place up, and the
// next page skipped a case that was still there.
func TestANextPageSkipsNoCaseWhenAnEarlierOneIsDeleted(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	first := writeDataset(t, root, testfixtures.OTelEvents) // a file of its own
	before, err := filepath.Glob(filepath.Join(root, "*", "dt=*", "*.parquet"))
	require.NoError(t, err)
	writeDataset(t, root, testfixtures.Traceloop, testfixtures.OpenInference)
	s := startReplay(t, root, func(c *Config) { c.RefreshInterval = time.Hour }) // refreshed below
	list := func(q string) ([]string, string) { return casesPage(t, s, q) }
	all, _ := list("")
	require.Len(t, all, 3)
	require.Contains(t, all, first[0].CaseID)

	var got []string
	page, next := list("?limit=1")
	got = append(got, page...)
	if page[0] != first[0].CaseID { // the deleted case must be on a page already read
		page, next = list("?limit=1&page_token=" + next)
		got = append(got, page...)
	}
	require.Contains(t, got, first[0].CaseID)
	for _, f := range before {
		require.NoError(t, os.Remove(f))
	}
	require.Equal(t, 1, s.ext.store.refresh(context.Background()).dropped, "the refresh forgets the deleted case")
	for next != "" {
		page, next = list("?limit=1&page_token=" + next)
		got = append(got, page...)
	}
	assert.ElementsMatch(t, all, got, "every case listed once, the deleted one before it went")
}

// casesPage is one page of GET /v1/cases: its case ids and its next_page_token.
func casesPage(t *testing.T, s *server, query string) (ids []string, next string) {
	t.Helper()
	return listedPage(t, s, "/v1/cases"+query)
}

// listedPage is one page of a listing (GET /v1/cases or /v1/calls/{id}): the case ids it lists
// and its next_page_token.
func listedPage(t *testing.T, s *server, path string) (caseIDs []string, next string) {
	t.Helper()
	resp, body := s.do("GET", path, nil, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	var out struct {
		Cases, Occurrences []struct {
			CaseID string `json:"case_id"`
		}
		NextPageToken string `json:"next_page_token"`
	}
	require.NoError(t, json.Unmarshal(body, &out))
	for _, c := range append(out.Cases, out.Occurrences...) {
		caseIDs = append(caseIDs, c.CaseID)
	}
	return caseIDs, out.NextPageToken
}
