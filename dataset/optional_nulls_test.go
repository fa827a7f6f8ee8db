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
// parquet-go v0.32's GenericWriter.Write stored some as "" (a null after a run of present
// values, among the rows of one call or the elements of one list).
func TestStoredRowsAreTheRowsDeconstructed(t *testing.T) {
	var cases []*replaycase.Case
	for i := range 3 {
		cases = append(cases, mergeTestBatch(t, i)...)
	}
	// A list whose elements after the first are null, present, null in an optional field:
	// the pattern Write got wrong inside one row.
	var listed replaycase.Case
	for _, c := range cases {
		if len(c.Steps) > 1 && DatasetOf(c) == Cases {
			listed = *c
			break
		}
	}
	require.NotEmpty(t, listed.Steps)
	for len(listed.Steps) < 4 {
		listed.Steps = append(listed.Steps, listed.Steps[len(listed.Steps)-1])
	}
	listed.Steps = append([]replaycase.Step(nil), listed.Steps...)
	listed.CaseID = "list-pattern"
	listed.Steps[0].Error, listed.Steps[1].Error, listed.Steps[2].Error, listed.Steps[3].Error = "first", "", "boom", ""
	cases = append(cases, &listed)
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
