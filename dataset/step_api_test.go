package dataset_test

import (
	"path/filepath"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/replaycase"
)

// steps.api is an optional column: the API of each model step (these fixtures were recorded from
// Chat Completions calls), null for tool, retrieval and agent steps, read back by a reader that
// knows nothing of the case model.
func TestStepAPIColumn(t *testing.T) {
	w := newWriter(t)
	_, err := w.Write(fixtureCases(t))
	require.NoError(t, err)

	type row struct {
		Kind string  `parquet:"kind"`
		API  *string `parquet:"api,optional"`
	}
	llm, other := 0, 0
	for _, f := range tree(t, w.Root()) {
		if filepath.Dir(filepath.Dir(f)) != "steps" {
			continue
		}
		rows, err := parquet.ReadFile[row](filepath.Join(w.Root(), f))
		require.NoError(t, err)
		for _, r := range rows {
			if r.Kind == string(replaycase.StepLLM) {
				require.NotNil(t, r.API)
				require.Equal(t, replaycase.APIOpenAIChatCompletions, *r.API)
				llm++
			} else {
				require.Nil(t, r.API, r.Kind)
				other++
			}
		}
	}
	require.Positive(t, llm)
	require.Positive(t, other)
}
