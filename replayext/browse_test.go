package replayext

import (
	"encoding/json"
	"math"
	"net/http"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/internal/testfixtures"
)

// A page_token past the cases lists none and has no next page, however large: offset and
// limit are never added, so the largest int cannot wrap to a negative token. A page_token
// that is not a listing's own is a 400 naming it.
func TestAPageTokenPastTheCasesListsNone(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	writeDataset(t, root, testfixtures.OTelEvents, testfixtures.Traceloop)
	s := startReplay(t, root, nil)
	for _, token := range []int{2, 1000, math.MaxInt - 1000, math.MaxInt} {
		resp, body := s.do("GET", "/v1/cases?limit=1000&page_token="+strconv.Itoa(token), nil, nil)
		require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
		assert.JSONEq(t, `{"cases":[]}`, string(body), "page_token %d", token)
	}
	resp, body := s.do("GET", "/v1/cases?limit=1&page_token=0", nil, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	assert.Contains(t, string(body), `"next_page_token":"1"`)

	for _, token := range []string{"-1", "x", "9223372036854775808"} {
		resp, body := s.do("GET", "/v1/cases?page_token="+token, nil, nil)
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, token)
		var e struct{ Error struct{ Param string } }
		require.NoError(t, json.Unmarshal(body, &e))
		assert.Equal(t, "page_token", e.Error.Param, token)
	}
}
