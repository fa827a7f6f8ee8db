package replayext

import (
	"context"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/internal/testdataset"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/internal/testpipeline"
)

// A retrieval's data source is client text like its query (a URL with a key in its query
// string, an index named after a customer): the processor recorded it scrubbed, so a live
// request naming the same source matches only once the extension scrubs it too.
func TestRetrievalDataSourceIsScrubbedBeforeMatching(t *testing.T) {
	const source = "kb-v3 for planted.user@acme-corp.io"
	root := filepath.Join(t.TempDir(), "data")
	td := testfixtures.Traces(t, testfixtures.OTelEvents)
	testfixtures.WithTraceID(td, plog.NewLogs(), 0)
	replaceText(td, "kb-v3", source)
	exp := testdataset.Writer(t, root, "zstd")
	cases := testpipeline.RunTraces(t, exp, []string{testfixtures.OTelEvents}, []ptrace.Traces{td})
	require.NoError(t, exp.Shutdown(context.Background()))
	require.Len(t, cases, 1)
	require.Contains(t, cases[0].RetrievalRefs[0].DataSource, "<secret:email:", "the dataset holds the source scrubbed")

	s := startReplay(t, root, nil)
	resp, body := s.do("POST", "/v1/cases/"+cases[0].CaseID+"/retrieval",
		map[string]string{"query": "What is the weather in Paris today?", "data_source": source}, nil)
	assert.Equal(t, http.StatusOK, resp.StatusCode, string(body))
}
