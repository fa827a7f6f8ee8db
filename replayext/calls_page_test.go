package replayext

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/internal/testfixtures"
)

// A call every run makes is recorded in every case: GET /v1/calls/{id} answers one page of its
// occurrences (limit, page_token, next_page_token), never all of them at once.
func TestCallOccurrencesArePaged(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	cases := writeDataset(t, root, testfixtures.OTelEvents, testfixtures.OTelEvents, testfixtures.OTelEvents)
	s := startReplay(t, root, nil)
	callID := cases[0].Steps[1].CallSiteID
	page := func(q string) (caseIDs []string, next string) {
		resp, body := s.do("GET", "/v1/calls/"+callID+q, nil, nil)
		require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
		var out struct {
			Occurrences []struct {
				CaseID string `json:"case_id"`
			}
			NextPageToken string `json:"next_page_token"`
		}
		require.NoError(t, json.Unmarshal(body, &out))
		for _, o := range out.Occurrences {
			caseIDs = append(caseIDs, o.CaseID)
		}
		return caseIDs, out.NextPageToken
	}
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
