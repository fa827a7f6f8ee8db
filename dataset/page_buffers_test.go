package dataset_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	. "github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/replaycase"
)

// The writers keep column pages in the dataset's own page buffers instead of parquet-go's
// (page_buffers.go); a file must come out byte for byte as parquet-go's pool writes it, for a
// segment and for a final file, from small batches (most columns nearly empty) to large ones
// (columns past the 64 KiB chunks), and again when the buffers are reused.
func TestPageBuffersWriteTheFileParquetGoWrites(t *testing.T) {
	full := replaycase.Case{}
	require.Greater(t, FillEveryField(&full), 100)
	for _, n := range []int{1, 30, 600} {
		var rows []CaseRow
		for i := 0; len(rows) < n; i++ {
			for _, c := range everyFixtureCase(t) {
				c.CaseID = replaycase.ID(c.Provenance.TraceID, fmt.Sprint(i))
				rows = append(rows, *c)
			}
			f := full
			f.CaseID = fmt.Sprint("full-", i)
			rows = append(rows, f)
		}
		rows = rows[:n]
		for _, segment := range []bool{true, false} {
			var want bytes.Buffer
			require.NoError(t, WriteCasesWithPagePool(&want, rows, segment, true))
			for round := range 2 {
				var got bytes.Buffer
				require.NoError(t, WriteCasesWithPagePool(&got, rows, segment, false))
				require.True(t, bytes.Equal(want.Bytes(), got.Bytes()),
					"%d rows, segment %v, round %d: %d bytes against parquet-go's %d", n, segment, round, got.Len(), want.Len())
			}
		}
	}
}
