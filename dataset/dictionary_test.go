package dataset_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	. "github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/internal/testdataset"
	"github.com/reprise-dev/reprise/replaycase"
)

// sameTools are two tools an agent offers on every call, one with a schema of ~2 KB.
func sameTools(string, int) []replaycase.ToolDefinition {
	schema := `{"type":"object","properties":{"q":{"type":"string","description":"` + strings.Repeat("what to look up ", 128) + `"}}}`
	return []replaycase.ToolDefinition{
		{Type: "function", Name: "lookup", Description: "Looks records up.", Parameters: schema},
		{Type: "function", Name: "answer", Parameters: `{"type":"object"}`},
	}
}

// Tool definitions are stored dictionary-encoded, since an agent offers the same few schemas
// on every call: a file holds each schema once, and the writers copy each once. Distinct
// schemas past maxDictionaryBytes make the chunk's later pages PLAIN, which bounds the
// dictionary held in memory. Either way the rows are those of a direct write, published by
// Write and staged and merged.
func TestToolDefinitionsDictionaryEncoded(t *testing.T) {
	for _, distinct := range []bool{false, true} {
		t.Run(fmt.Sprintf("distinct=%v", distinct), func(t *testing.T) {
			base := t.TempDir()
			writer := func(name string, fileMaxAge time.Duration) *Writer {
				return sizedWriter(t, base, name, fileMaxAge, 100_000, 100_000) // one file, one row group per batch
			}
			direct, published, merged := writer("direct", 0), writer("published", 0), writer("merged", time.Hour)
			// 100 distinct tools per call: tens of thousands of values per column chunk,
			// megabytes of distinct ones, past the dictionary's bound at a page's end.
			offer := sameTools
			if distinct {
				offer = testdataset.DistinctTools(100)
			}
			cases := testdataset.OfferingTools(everyFixtureCase(t), 200, offer)
			for half := range 2 {
				batch := cases[half*len(cases)/2 : (half+1)*len(cases)/2]
				require.NoError(t, WriteDeconstructed(direct, batch))
				_, err := published.Write(batch)
				require.NoError(t, err)
				_, err = merged.Write(batch)
				require.NoError(t, err)
			}
			_, err := merged.Flush(true)
			require.NoError(t, err)
			for _, dataset := range []string{Cases, Steps} {
				assertSameRows(t, direct.Root(), published.Root(), dataset)
				assertSameRows(t, direct.Root(), merged.Root(), dataset)
			}

			column := map[string][]string{
				Cases: {"steps", "list", "element", "tool_definitions", "list", "element", "parameters"},
				Steps: {"tool_definitions", "list", "element", "parameters"},
			}
			for _, w := range []*Writer{published, merged} {
				for dataset, path := range column {
					files, err := NewLister(w.Root(), dataset).Next()
					require.NoError(t, err)
					require.NotEmpty(t, files)
					for _, f := range files {
						dict, plain := testdataset.DataPages(t, f.Path, path...)
						assert.Positive(t, dict, "%s: dictionary pages", f.Path)
						if distinct {
							assert.Positive(t, plain, "%s: PLAIN pages past the dictionary's bound", f.Path)
						} else {
							assert.Zero(t, plain, "%s: PLAIN pages", f.Path)
						}
					}
				}
			}
		})
	}
}
