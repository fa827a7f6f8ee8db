package replayparquetreceiver

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"
	"go.uber.org/zap"

	"github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/internal/testdataset"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/receiver/replayparquetreceiver/internal/metadatatest"
	"github.com/reprise-dev/reprise/replaycase"
)

// rowGroupsFile writes n quarantined cases into root as one data file of row groups of
// rowGroupRows rows, read after the files already there, and returns its path and its rows.
func rowGroupsFile(t *testing.T, root string, n, rowGroupRows int) (string, []replaycase.Case) {
	t.Helper()
	scratch := filepath.Join(t.TempDir(), "data")
	capture(t, scratch, testfixtures.OTelNoContent, 10, n, strict)
	var cases []*replaycase.Case
	for _, r := range rowsOf(t, scratch, dataset.Quarantine) {
		cases = append(cases, &r.c)
	}
	require.Len(t, cases, n)
	time.Sleep(5 * time.Millisecond) // named (UUIDv7) after the files in root, and so read last
	w, err := dataset.NewWriter(dataset.WriterConfig{
		Root: root, Staging: filepath.Join(t.TempDir(), "staging"),
		Compression: "zstd", MaxRowsPerFile: 100, RowGroupRows: rowGroupRows,
	})
	require.NoError(t, err)
	res, err := w.Write(cases)
	require.NoError(t, err)
	require.Len(t, res.Files, 1)
	rows, err := dataset.ReadCases(res.Files[0].Path)
	require.NoError(t, err)
	return res.Files[0].Path, rows
}

// A file whose footer is sound but one of whose pages is corrupt fails at that page at every
// read. Of a file of three row groups (rows 0-2, 3-5, 6-8) whose middle one has a corrupt
// page, every row of the other row groups is emitted, also row 2, read with row 3 when read
// two at a time; the rows of the page (3 to 5) are counted in rows_skipped and logged once
// with the file and the range; then the file is set aside as an unreadable file is (logged
// once, counted, recorded in its checkpoint), and once mode finishes its backlog. A restart
// neither reads nor logs it again, nor emits any of its rows a second time.
func TestCorruptPageLosesOnlyItsRows(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	capture(t, root, testfixtures.OTelNoContent, 1, 2, strict)
	good := rowsOf(t, root, dataset.Quarantine)
	path, rows := rowGroupsFile(t, root, 9, 3)
	testdataset.CorruptPage(t, path, 1, testdataset.PageBodyBadCRC, "case_id")

	// Batches of two rows, of which the corrupt file's even rows are selected: row 0 waits
	// in a batch, not full, when the read of rows 2 and 3 fails.
	edit := func(c *Config) {
		c.BatchSize = 2
		c.Select.CaseIDs = []string{good[0].c.CaseID, good[1].c.CaseID}
		for i := 0; i < len(rows); i += 2 {
			c.Select.CaseIDs = append(c.Select.CaseIDs, rows[i].CaseID)
		}
	}
	storageDir := t.TempDir()
	first := runObserved(t, root, storageDir, edit, recorded)
	assert.ElementsMatch(t, []string{
		good[0].c.Provenance.TraceID, good[1].c.Provenance.TraceID,
		rows[0].Provenance.TraceID, rows[2].Provenance.TraceID, rows[6].Provenance.TraceID, rows[8].Provenance.TraceID,
	}, first.accepted, "the good file's cases and the corrupt file's selected rows outside the corrupt page")
	lost := first.logs.FilterMessageSnippet("rows of a data file cannot be read").All()
	require.Len(t, lost, 1, "logged once")
	assert.Equal(t, zap.ErrorLevel, lost[0].Level)
	assert.Equal(t, path, lost[0].ContextMap()["file"])
	assert.Equal(t, "3-5", lost[0].ContextMap()["rows"])
	assert.Contains(t, lost[0].ContextMap()["error"], "checksum", "the reason")
	setAside := first.logs.FilterMessageSnippet("not a data file this build reads").All()
	require.Len(t, setAside, 1, "logged once")
	assert.Equal(t, zap.ErrorLevel, setAside[0].Level)
	assert.Equal(t, path, setAside[0].ContextMap()["file"])
	assert.Empty(t, first.logs.FilterMessageSnippet("read again at the next poll").All(), "not retried")
	opts := []metricdatatest.Option{metricdatatest.IgnoreTimestamp()}
	unreadable := attribute.NewSet(attribute.String("dataset", "quarantine"), attribute.String("reason", "unreadable"))
	metadatatest.AssertEqualReceiverReplayParquetRowsSkipped(t, first.tt, []metricdata.DataPoint[int64]{{Value: 3, Attributes: unreadable}}, opts...)
	metadatatest.AssertEqualReceiverReplayParquetFilesSkipped(t, first.tt, []metricdata.DataPoint[int64]{{Value: 1, Attributes: unreadable}}, opts...)

	again := runObserved(t, root, storageDir, edit, recorded)
	assert.Empty(t, again.accepted)
	assert.Empty(t, again.logs.FilterLevelExact(zap.ErrorLevel).All(), "not read, nor logged, again")
	_, err := again.tt.GetMetric(filesSkipped)
	assert.Error(t, err, "not counted again")
	_, err = again.tt.GetMetric("otelcol_receiver_replay_parquet_rows_skipped")
	assert.Error(t, err, "its rows not counted again")
}
