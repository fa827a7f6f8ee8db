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

// sixRowFile writes six quarantined cases into root as one data file of two row groups (rows
// 0-2 and 3-5), read after the files already there, and returns its path and its rows.
func sixRowFile(t *testing.T, root string) (string, []replaycase.Case) {
	t.Helper()
	scratch := filepath.Join(t.TempDir(), "data")
	capture(t, scratch, testfixtures.OTelNoContent, 10, 6, strict)
	var cases []*replaycase.Case
	for _, r := range rowsOf(t, scratch, dataset.Quarantine) {
		cases = append(cases, &r.c)
	}
	require.Len(t, cases, 6)
	time.Sleep(5 * time.Millisecond) // named (UUIDv7) after the files in root, and so read last
	w, err := dataset.NewWriter(dataset.WriterConfig{
		Root: root, Staging: filepath.Join(t.TempDir(), "staging"),
		Compression: "zstd", MaxRowsPerFile: 100, RowGroupRows: 3,
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
// read: the rows before it are emitted, the rest of the file is set aside as an unreadable
// file is (logged once, counted, recorded in its checkpoint), and once mode finishes its
// backlog; a restart neither reads nor logs it again, nor emits its first rows a second time.
func TestCorruptPageSetsAsideTheRestOfTheFile(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	capture(t, root, testfixtures.OTelNoContent, 1, 2, strict)
	good := rowsOf(t, root, dataset.Quarantine)
	path, rows := sixRowFile(t, root)
	testdataset.CorruptPage(t, path, 1, testdataset.PageBodyBadCRC, "case_id")

	// Batches of two rows, of which only rows 0 and 4 of the corrupt file are selected: row 0
	// waits in a batch, not full, when the read of rows 2 and 3 fails.
	edit := func(c *Config) {
		c.BatchSize = 2
		c.Select.CaseIDs = []string{good[0].c.CaseID, good[1].c.CaseID, rows[0].CaseID, rows[4].CaseID}
	}
	storageDir := t.TempDir()
	first := runObserved(t, root, storageDir, edit, recorded)
	assert.ElementsMatch(t, []string{good[0].c.Provenance.TraceID, good[1].c.Provenance.TraceID, rows[0].Provenance.TraceID}, first.accepted,
		"the good file's cases and the corrupt file's selected row before the corrupt page")
	setAside := first.logs.FilterMessageSnippet("not a data file this build reads").All()
	require.Len(t, setAside, 1, "logged once")
	assert.Equal(t, zap.ErrorLevel, setAside[0].Level)
	assert.Equal(t, path, setAside[0].ContextMap()["file"])
	assert.Contains(t, setAside[0].ContextMap()["error"], "checksum", "the reason")
	assert.Empty(t, first.logs.FilterMessageSnippet("read again at the next poll").All(), "not retried")
	opts := []metricdatatest.Option{metricdatatest.IgnoreTimestamp()}
	metadatatest.AssertEqualReceiverReplayParquetFilesSkipped(t, first.tt, []metricdata.DataPoint[int64]{
		{Value: 1, Attributes: attribute.NewSet(attribute.String("dataset", "quarantine"), attribute.String("reason", "unreadable"))},
	}, opts...)

	again := runObserved(t, root, storageDir, edit, recorded)
	assert.Empty(t, again.accepted)
	assert.Empty(t, again.logs.FilterLevelExact(zap.ErrorLevel).All(), "not read, nor logged, again")
	_, err := again.tt.GetMetric(filesSkipped)
	assert.Error(t, err, "not counted again")
}
