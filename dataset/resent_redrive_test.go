package dataset_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	. "github.com/reprise-dev/reprise/dataset"
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

// A case read from one row (metadata redriven_from, the replay_parquet receiver's copy or
// re-drive) and sent again marked Resent is not taken for the copy of another row of the same
// case, built from the same spans with the same verdict: a case re-driven and quarantined again
// has two such rows, and a copy killed before it wrote the newer one lost it, its copy keeping
// the older row as the current one.
func TestAResentCaseIsNotTakenForTheCopyOfAnotherSourceRow(t *testing.T) {
	from := func(row string) *replaycase.Case {
		c := markedResent([]*replaycase.Case{fixtureCases(t)[2]})[0]
		c.Metadata = map[string]string{MetaRedrivenFrom: "quarantine/dt=2026-11-30/part-" + row}
		return c
	}
	crashed := newWriter(t)
	older := from("a.zstd.parquet#0")
	older.Resent = false
	_, err := crashed.Write([]*replaycase.Case{older})
	require.NoError(t, err)

	restarted := restart(t, crashed)
	res, err := restarted.Write([]*replaycase.Case{from("b.zstd.parquet#0")})
	require.NoError(t, err)
	assert.Empty(t, res.Resent, "the newer row was never written")
	res, err = restarted.Write([]*replaycase.Case{from("a.zstd.parquet#0")})
	require.NoError(t, err)
	assert.Equal(t, []string{older.CaseID}, res.Resent, "the copy of the same row is found")

	byID, _ := publishedRows(t, restarted.Root())
	assert.Equal(t, map[string]int{older.CaseID: 2}, byID, "the older row and the newer one, once each")
}
