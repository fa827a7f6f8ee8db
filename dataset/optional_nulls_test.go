package dataset_test

import (
	"bytes"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	. "github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/replaycase"
)

// Every row is stored as parquet-go's Schema.Deconstruct makes it, value for value and level
// for level: an empty optional string is NULL wherever its row or list element falls.
// parquet-go v0.32's GenericWriter.Write, given many rows at once, stored some as "" (a null
// after a run of present values, at some positions of the rows one call writes).
func TestStoredRowsAreTheRowsDeconstructed(t *testing.T) {
	var cases []*replaycase.Case
	for i := range 3 {
		cases = append(cases, mergeTestBatch(t, i)...)
	}
	caseRows := make([]CaseRow, 0, len(cases))
	for _, c := range cases {
		caseRows = append(caseRows, *c)
	}
	assertStoredAsDeconstructed(t, caseRows)
	assertStoredAsDeconstructed(t, StepRowsOf(cases))
}

func assertStoredAsDeconstructed[T any](t *testing.T, rows []T) {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, WriteLikeTheWriter(&buf, rows, 3))
	pf, err := parquet.OpenFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	require.NoError(t, err)
	stored := parquetRows(t, pf)
	require.Len(t, stored, len(rows))
	schema := parquet.SchemaOf(*new(T))
	for i := range rows {
		want := schema.Deconstruct(nil, &rows[i])
		assert.True(t, want.Equal(stored[i]), "row %d:\nwant %v\ngot  %v", i, want, stored[i])
	}
}
