package replayext

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/replaycase"
)

// A case `reprise mutate` made keeps the original's agent, status and times: a client picking
// "the case of agent X" (reprise_pytest's case_id) got two and could not tell which was the
// recorded run. The listing marks the mutation with the original's id (mutation_of), from the
// case's metadata, whether the summary is read from the file or from a cached case.
func TestTheListingMarksAMutation(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	orig := writeDataset(t, root, testfixtures.OTelEvents)[0]
	b, err := json.Marshal(orig)
	require.NoError(t, err)
	var mutated replaycase.Case
	require.NoError(t, json.Unmarshal(b, &mutated))
	mutated.CaseID = replaycase.ID(orig.Provenance.TraceID, "mutation/test")
	mutated.Metadata = map[string]string{replaycase.MetaDerivedFrom: orig.CaseID, replaycase.MetaMutation: `{"step":1,"edit":"response","value":"\"Hi\""}`}
	w, err := dataset.NewWriter(dataset.WriterConfig{Root: root, Staging: root + ".staging", Compression: "zstd", MaxRowsPerFile: 10, RowGroupRows: 10})
	require.NoError(t, err)
	_, err = w.Write([]*replaycase.Case{&mutated})
	require.NoError(t, err)
	require.NoError(t, w.Close())

	s := startReplay(t, root, nil)
	for _, cached := range []bool{false, true} {
		if cached { // the summary of a case a request read comes from the case cache
			resp, body := s.do("GET", "/v1/cases/"+mutated.CaseID, nil, nil)
			require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
			assert.Contains(t, string(body), `"mutation":`, "the whole case holds the edit in its metadata")
		}
		var listing struct {
			Cases []map[string]any `json:"cases"`
		}
		require.Eventually(t, func() bool {
			resp, body := s.do("GET", "/v1/cases?agent=weather-bot", nil, nil)
			require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
			require.NoError(t, json.Unmarshal(body, &listing))
			return len(listing.Cases) == 2
		}, 5*time.Second, 50*time.Millisecond)
		marks := map[any]any{}
		for _, c := range listing.Cases {
			marks[c["case_id"]] = c["mutation_of"]
		}
		assert.Equal(t, map[any]any{orig.CaseID: nil, mutated.CaseID: orig.CaseID}, marks, "cached %v", cached)
	}
}
