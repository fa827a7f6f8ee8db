package replayparquetreceiver

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/internal/teststorage"
	"github.com/reprise-dev/reprise/receiver/replayparquetreceiver/internal/metadatatest"
)

// A long re-drive says how far it is: while the backlog is read, a line at most every
// progressInterval with the files read of those selected and the cases emitted; the line that
// ends the backlog gives the totals. Before, nothing was logged until the backlog was done.
func TestReadingABacklogLogsItsProgress(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	capture(t, root, testfixtures.OTelNoContent, 1, 3, strict) // quarantined: the re-drive's default selection
	files, err := dataset.NewLister(root, dataset.Quarantine).Next()
	require.NoError(t, err)
	require.NotEmpty(t, files)

	was := progressInterval
	progressInterval = 0 // a line after every file
	t.Cleanup(func() { progressInterval = was })
	core, logs := observer.New(zap.InfoLevel)
	tt := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tt.Shutdown(context.Background())) })
	set := metadatatest.NewSettings(tt)
	set.Logger = zap.New(core)
	host, ext := teststorage.Start(t, t.TempDir())
	traces := new(consumertest.TracesSink)
	rcv, r := newTestReceiver(t, set, root, func(*Config) {}, traces, nil)
	require.NoError(t, rcv.Start(context.Background(), host))
	waitBacklog(t, r)
	require.NoError(t, rcv.Shutdown(context.Background()))
	require.NoError(t, ext.Shutdown(context.Background()))

	lines := logs.FilterMessage("replay_parquet: reading the backlog").All()
	require.Len(t, lines, len(files), "one line per file at an interval of 0")
	last := lines[len(lines)-1].ContextMap()
	assert.EqualValues(t, len(files), last["files_read"])
	assert.EqualValues(t, len(files), last["files_selected"])
	assert.EqualValues(t, 3, last["cases_emitted"])
	done := logs.FilterMessageSnippet("backlog done (mode: once)").All()
	require.Len(t, done, 1)
	assert.EqualValues(t, 3, done[0].ContextMap()["cases_emitted"])
}

// At the default interval a short backlog logs no progress line, only its end.
func TestAShortBacklogLogsOnlyItsEnd(t *testing.T) {
	p := newBacklogProgress(zap.NewNop(), "d", time.Unix(0, 0))
	core, logs := observer.New(zap.InfoLevel)
	p.logger = zap.New(core)
	p.fileRead(2, time.Unix(1, 0))
	assert.Zero(t, logs.Len(), "within the interval")
	p.casesEmitted(7)
	p.fileRead(2, time.Unix(0, 0).Add(progressInterval))
	require.Equal(t, 1, logs.Len())
	assert.EqualValues(t, 7, logs.All()[0].ContextMap()["cases_emitted"])
	assert.EqualValues(t, 2, logs.All()[0].ContextMap()["files_read"])
}
