package dataset_test

import (
	"bytes"
	"errors"
	"io"
	"path/filepath"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	. "github.com/reprise-dev/reprise/dataset"
)

// Spark (parquet-mr) skips the pages whose column index bounds exclude the value a query looks
// for. parquet-go wrote a column index of "" to "" for the columns without statistics (trace and
// span ids, free text), so in Spark `WHERE provenance.trace_id = '…'` returned no row. Every
// column index of a published file must hold the values of its pages between its bounds; a
// column without bounds has none.
func TestColumnIndexesHoldTheirPagesValues(t *testing.T) {
	w := newWriter(t)
	cases := fixtureCases(t)
	cases[0].WorkflowName = "nightly"
	res, err := w.Write(cases)
	require.NoError(t, err)
	paths := []string{}
	for _, f := range res.Files {
		paths = append(paths, f.Path)
	}
	rows, err := ReadCases(res.Files[len(res.Files)-1].Path)
	require.NoError(t, err)
	export := filepath.Join(t.TempDir(), "export.parquet")
	require.NoError(t, WriteCaseFile(export, "zstd", rows))
	paths = append(paths, export)

	for _, path := range paths {
		pf := openParquet(t, path)
		checked := 0
		for _, rg := range pf.RowGroups() {
			for j, chunk := range rg.ColumnChunks() {
				if chunk.Type().Kind() != parquet.ByteArray {
					continue
				}
				index, err := chunk.ColumnIndex()
				if errors.Is(err, parquet.ErrMissingColumnIndex) {
					continue
				}
				require.NoError(t, err)
				column := pf.Schema().Columns()[j]
				pages := chunk.Pages()
				for i := 0; ; i++ {
					page, err := pages.ReadPage()
					if errors.Is(err, io.EOF) {
						break
					}
					require.NoError(t, err)
					values := make([]parquet.Value, page.NumValues())
					n, _ := page.Values().ReadValues(values)
					for _, v := range values[:n] {
						if v.IsNull() {
							continue
						}
						checked++
						lo, hi := index.MinValue(i).ByteArray(), index.MaxValue(i).ByteArray()
						assert.True(t, bytes.Compare(lo, v.ByteArray()) <= 0 && bytes.Compare(v.ByteArray(), hi) <= 0,
							"%s: %v: page %d bounds [%q, %q] exclude %q", filepath.Base(path), column, i, lo, hi, v.ByteArray())
					}
					parquet.Release(page)
				}
				pages.Close()
			}
		}
		assert.Positive(t, checked, path)
	}
	// The files still read back through their page index.
	for _, f := range res.Files {
		if f.Dataset == Cases {
			c, err := OpenCaseFile(f.Path)
			require.NoError(t, err)
			got, err := c.ReadCase(0)
			require.NoError(t, err)
			assert.NotEmpty(t, got.CaseID)
			require.NoError(t, c.Close())
		}
	}
}
