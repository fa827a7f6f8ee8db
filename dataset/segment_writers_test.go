package dataset_test

import (
	"bytes"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	. "github.com/reprise-dev/reprise/dataset"
)

// A segment written by a reused writer must be the very file a new writer makes of the same
// rows: a reset that leaves anything of the previous file behind (parquet-go#602 emptied every
// column's path_in_schema) changes its bytes. The batches shrink and grow across the 1,024-row
// row group, so a reused writer has held more and fewer row groups than it writes next.
func TestAReusedSegmentWriterWritesTheFileANewOneWrites(t *testing.T) {
	templates := caseTemplates(t)
	var batches [][]CaseRow
	for i, n := range []int{1500, 40, 2100, 1, 700} {
		rows := make([]CaseRow, n)
		for j, c := range nullPatternBatch(t, templates, i, n) {
			rows[j] = *c
		}
		batches = append(batches, rows)
	}
	fresh, err := WriteSegments(batches, false)
	require.NoError(t, err)
	reused, err := WriteSegments(batches, true)
	require.NoError(t, err)
	for i := range batches {
		assert.True(t, bytes.Equal(fresh[i], reused[i]), "segment %d of %d rows differs when its writer is reused", i, len(batches[i]))
		pf, err := parquet.OpenFile(bytes.NewReader(reused[i]), int64(len(reused[i])))
		require.NoError(t, err)
		assert.EqualValues(t, len(batches[i]), pf.NumRows())
		assert.True(t, WrittenWithWrite(pf), "segment %d is not on the fast path, whose writers are reused", i)
	}
}
