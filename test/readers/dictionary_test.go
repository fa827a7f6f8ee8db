package readers

import (
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/internal/testdataset"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/internal/testpipeline"
)

// Tool definitions are stored dictionary-encoded, and where a column chunk's distinct values
// pass the dictionary's bound, its later pages are PLAIN. DuckDB and Arrow read every value of
// such a chunk.
func TestReadersReadDictionaryAndPlainPagesOfOneColumn(t *testing.T) {
	fixtures := testpipeline.Run(t, nil, testfixtures.OpenInference, testfixtures.Traceloop)
	for _, c := range fixtures {
		require.Equal(t, dataset.Cases, dataset.DatasetOf(c))
	}
	batch := testdataset.OfferingTools(fixtures, 400, testdataset.DistinctTools(100))
	want := map[string]bool{}
	for _, c := range batch {
		for _, st := range c.Steps {
			for _, d := range st.ToolDefinitions {
				want[d.Parameters] = true
			}
		}
	}
	root := filepath.Join(t.TempDir(), "reprise-data")
	w, err := dataset.NewWriter(dataset.WriterConfig{ // the exporter's defaults
		Root: root, Staging: root + ".staging", Compression: "zstd", MaxRowsPerFile: 100_000, RowGroupRows: 5_000,
	})
	require.NoError(t, err)
	_, err = w.Write(batch)
	require.NoError(t, err)
	files, err := dataset.NewLister(root, dataset.Steps).Next()
	require.NoError(t, err)
	var dictPages, plainPages int
	for _, f := range files {
		d, p := testdataset.DataPages(t, f.Path, "tool_definitions", "list", "element", "parameters")
		dictPages, plainPages = dictPages+d, plainPages+p
	}
	require.Positive(t, dictPages, "dictionary pages")
	require.Positive(t, plainPages, "PLAIN pages past the dictionary's bound")

	rows, err := duck(t).Query(`SELECT d.parameters FROM (SELECT unnest(tool_definitions) AS d FROM read_parquet('` + filepath.Join(root, "steps") + `/**/*.parquet'))`)
	require.NoError(t, err)
	fromDuckDB, duckDBValues := map[string]bool{}, 0
	for rows.Next() {
		var p string
		require.NoError(t, rows.Scan(&p))
		fromDuckDB[p] = true
		duckDBValues++
	}
	require.NoError(t, rows.Err())
	require.NoError(t, rows.Close())
	require.Equal(t, want, fromDuckDB, "DuckDB")
	require.Equal(t, len(want), duckDBValues, "DuckDB: every value once")

	_, _, tables := readArrow(t, filepath.Join(root, "steps"))
	fromArrow, arrowValues := map[string]bool{}, 0
	for _, tbl := range tables {
		for _, chunk := range tbl.Column(tbl.Schema().FieldIndices("tool_definitions")[0]).Data().Chunks() {
			defs := chunk.(*array.List).ListValues().(*array.Struct)
			idx, ok := defs.DataType().(*arrow.StructType).FieldIdx("parameters")
			require.True(t, ok)
			params := defs.Field(idx).(*array.String)
			for i := range params.Len() {
				fromArrow[params.Value(i)] = true
			}
			arrowValues += params.Len()
		}
		tbl.Release()
	}
	require.Equal(t, want, fromArrow, "Arrow")
	require.Equal(t, len(want), arrowValues, "Arrow: every value once")
}
