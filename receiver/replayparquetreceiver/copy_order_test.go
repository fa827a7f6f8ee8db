package replayparquetreceiver

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/internal/testdataset"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/internal/teststorage"
	"github.com/reprise-dev/reprise/replaycase"
)

// A copy (emit: cases) of both datasets of a re-driven dataset has the same current row of
// each case as the original: the rows are copied in the order they were written, so the old
// quarantine row of a case re-driven into cases/ does not land after its accepted row and
// become the copy's current row again.
func TestCopyKeepsTheCurrentRowOfARedrivenCase(t *testing.T) {
	src, dst := filepath.Join(t.TempDir(), "src"), filepath.Join(t.TempDir(), "dst")
	capture(t, src, testfixtures.OTelNoContent, 1, 2, strict)
	exp := testdataset.Writer(t, src, "zstd")
	p := newCaseProcessor(t, exp, relaxed)
	runBacklog(t, src, p.traces, p.logs)
	p.shutdown(t)
	require.NoError(t, exp.Shutdown(context.Background()))
	want := currentRows(t, src)
	require.Len(t, want, 2)
	for id, c := range want {
		require.Equal(t, replaycase.StatusAccepted, c.Status, "re-driven case %s", id)
	}

	copied := testdataset.Writer(t, dst, "zstd")
	host, ext := teststorage.Start(t, t.TempDir())
	rcv, r := newTestReceiver(t, receivertest.NewNopSettings(NewFactory().Type()), src, func(c *Config) {
		c.Emit, c.Select.Datasets = EmitCases, []string{dataset.Cases, dataset.Quarantine}
	}, copied, nil)
	require.NoError(t, rcv.Start(context.Background(), host))
	waitBacklog(t, r)
	require.NoError(t, rcv.Shutdown(context.Background()))
	require.NoError(t, ext.Shutdown(context.Background()))
	require.NoError(t, copied.Shutdown(context.Background()))

	got := currentRows(t, dst)
	require.Len(t, got, len(want))
	for id := range want {
		assert.Equal(t, replaycase.StatusAccepted, got[id].Status, "the copy's current row of case %s", id)
	}
}
