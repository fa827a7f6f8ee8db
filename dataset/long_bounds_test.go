package dataset_test

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	. "github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/replaycase"
)

// A client controls labels such as agent_name, conversation_id, request_model and response_id,
// which keep min/max statistics. parquet-go copies a min and max into every page header (twice)
// and the footer untruncated: a 5 MiB agent name made a 20 MiB page header, which pyarrow
// refuses ("Couldn't deserialize thrift … Deserializing page header failed"), losing every
// case of the file for it. A file holding such a value has no statistics for that column (as
// Arrow and parquet-mr leave out statistics over 4 KiB); the other columns keep theirs.
func TestLongLabelsLeaveNoStatistics(t *testing.T) {
	long := strings.Repeat("a", 5<<20) // compresses to almost nothing: only statistics make a file large
	for name, w := range map[string]*Writer{"publish": newWriter(t), "segments": newSegmentWriter(t, 1000)} {
		t.Run(name, func(t *testing.T) {
			start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
			c := &replaycase.Case{
				CaseID: "long", SchemaVersion: SchemaVersion, Status: replaycase.StatusAccepted,
				StartTime: start, EndTime: start, AgentName: long, ConversationID: long,
				Steps: []replaycase.Step{{Kind: replaycase.StepLLM, ResponseID: long, ModelConfig: replaycase.ModelConfig{RequestModel: long}}},
			}
			other := &replaycase.Case{
				CaseID: "short", SchemaVersion: SchemaVersion, Status: replaycase.StatusAccepted,
				StartTime: start, EndTime: start, AgentName: "agent",
				Steps: []replaycase.Step{{Kind: replaycase.StepLLM, ResponseID: "r"}},
			}
			res, err := w.Write([]*replaycase.Case{c, other})
			require.NoError(t, err)
			if name == "segments" {
				res, err = w.Flush(true)
				require.NoError(t, err)
			}
			require.Len(t, res.Files, 2)
			for _, f := range res.Files {
				assert.Less(t, f.Bytes, int64(1<<20), "%s: no statistics hold the long values", f.Dataset)
				pf := openParquet(t, f.Path)
				stats := map[string]bool{}
				for _, cc := range pf.Metadata().RowGroups[0].Columns {
					path := cc.MetaData.PathInSchema
					stats[strings.Join(path, ".")] = cc.MetaData.Statistics.MaxValue != nil
					assert.LessOrEqual(t, len(cc.MetaData.Statistics.MaxValue), 4096, "%v", path)
				}
				if f.Dataset == Cases {
					assert.False(t, stats["agent_name"])
					assert.False(t, stats["conversation_id"])
					assert.True(t, stats["case_id"], "a column without a long value keeps its statistics")
					rows, err := ReadCases(f.Path)
					require.NoError(t, err)
					require.Len(t, rows, 2)
					assert.Equal(t, long, rows[0].AgentName)
					assert.Equal(t, long, rows[0].Steps[0].ResponseID)
				} else {
					assert.False(t, stats["response_id"])
					assert.True(t, stats["case_id"])
				}
			}
		})
	}
}

func openParquet(t *testing.T, path string) *parquet.File {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	pf, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	require.NoError(t, err)
	return pf
}
