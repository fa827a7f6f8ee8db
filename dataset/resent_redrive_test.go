package dataset_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/replaycase"
)

// A re-drive (replay_parquet receiver → replay_case with its write-ahead storage → this
// writer, into the dataset it reads) killed after the processor took a quarantined case and
// before the case was written: after the restart the processor sends the case again, marked
// Resent, now accepted. Its quarantine row, the row the re-drive read, has the same case id and
// was built from the same spans and events; taken for the copy written before the crash, it
// made the writer drop the re-driven case, which the receiver's checkpoint had passed: the case
// stayed quarantined, its re-drive lost. A copy is the same verdict: a marked case written into
// quarantine/ again is still dropped.
func TestARedrivenCaseSentAgainAfterACrashIsNotTakenForItsQuarantineRow(t *testing.T) {
	quarantined := fixtureCases(t)[2]
	require.Equal(t, replaycase.StatusQuarantined, quarantined.Status, "the run without content")
	crashed := newWriter(t)
	_, err := crashed.Write([]*replaycase.Case{quarantined})
	require.NoError(t, err)

	restarted := restart(t, crashed)
	redriven := markedResent([]*replaycase.Case{fixtureCases(t)[2]})[0]
	redriven.Status, redriven.Reasons = replaycase.StatusAccepted, nil // the relaxed policy's verdict
	res, err := restarted.Write([]*replaycase.Case{redriven})
	require.NoError(t, err)
	assert.Empty(t, res.Resent, "the re-driven case is not its quarantine row")
	again := markedResent([]*replaycase.Case{fixtureCases(t)[2]}) // quarantined again, as written
	res, err = restarted.Write(again)
	require.NoError(t, err)
	assert.Equal(t, []string{quarantined.CaseID}, res.Resent, "a copy of the same verdict is dropped")

	byID, _ := publishedRows(t, restarted.Root())
	assert.Equal(t, map[string]int{quarantined.CaseID: 2}, byID, "the quarantine row and the re-driven one")
}
