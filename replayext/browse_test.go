package replayext

import (
	"encoding/json"
	"math"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/internal/testfixtures"
)

// A page_token past the cases lists none and has no next page, however large: it names where a
// page ended (a start time and a case id), and the cases after it are listed. A page_token that
// is not a listing's own (an offset of the listings before 2026-12-07 among them) is a 400
// naming it.
func TestAPageTokenPastTheCasesListsNone(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	writeDataset(t, root, testfixtures.OTelEvents, testfixtures.Traceloop)
	s := startReplay(t, root, nil)
	for _, token := range []string{strconv.FormatInt(math.MaxInt64, 10) + "_" + strings.Repeat("f", 32), "4102444800000000000_" + strings.Repeat("0", 32)} {
		resp, body := s.do("GET", "/v1/cases?limit=1000&page_token="+token, nil, nil)
		require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
		assert.JSONEq(t, `{"cases":[]}`, string(body), "page_token %s", token)
	}
	resp, body := s.do("GET", "/v1/cases?limit=1", nil, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	var page struct {
		NextPageToken string `json:"next_page_token"`
	}
	require.NoError(t, json.Unmarshal(body, &page))
	_, ok := parseCaseCursor(page.NextPageToken)
	assert.True(t, ok, page.NextPageToken)

	for _, token := range []string{"-1", "1", "x", "9223372036854775808_" + strings.Repeat("0", 32), "5_" + strings.Repeat("0", 31), "5_" + strings.Repeat("g", 32)} {
		resp, body := s.do("GET", "/v1/cases?page_token="+token, nil, nil)
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, token)
		var e struct{ Error struct{ Param string } }
		require.NoError(t, json.Unmarshal(body, &e))
		assert.Equal(t, "page_token", e.Error.Param, token)
	}
}
