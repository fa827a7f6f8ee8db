package dataset_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	. "github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/replaycase"
)

// skippingRedelivered is w's configuration with SkipRedelivered, recovered.
func skippingRedelivered(t *testing.T, w *Writer) *Writer {
	t.Helper()
	cfg := ConfigOf(w)
	cfg.SkipRedelivered = true
	on, err := NewWriter(cfg)
	require.NoError(t, err)
	_, err = on.Recover(time.Now().Add(-15 * time.Minute))
	require.NoError(t, err)
	return on
}

func idsOf(cases []*replaycase.Case) []string {
	ids := make([]string, len(cases))
	for i, c := range cases {
		ids[i] = c.CaseID
	}
	return ids
}

// A collector killed after a batch was committed and before its persistent queue learnt it gets
// the batch again after the restart, regrouped with other cases (the queue puts what it was
// handing out back at its end). Each case delivered again as it was is written once; a case
// delivered with other content (a re-drive) and a case never written are written. The first
// write is interrupted between its renames: Recover finishes it.
func TestABatchDeliveredAgainAfterACrashIsWrittenOnce(t *testing.T) {
	w := skippingRedelivered(t, newWriter(t))
	SetAfterRename(w, func(renamed int) error { return errors.New("killed") })
	written := fixtureCases(t)
	_, err := w.Write(written)
	require.ErrorIs(t, err, ErrCommitted)

	restarted := restart(t, w)
	again := fixtureCases(t)
	changed := again[1]
	changed.EndTime = changed.EndTime.Add(time.Second)
	fresh := fixtureCases(t)[0]
	fresh.CaseID = replaycase.ID(fresh.Provenance.TraceID, "never written")
	res, err := restarted.Write([]*replaycase.Case{again[0], fresh})
	require.NoError(t, err)
	assert.Equal(t, []string{again[0].CaseID}, res.Redelivered)
	res, err = restarted.Write([]*replaycase.Case{changed, again[2]})
	require.NoError(t, err)
	assert.Equal(t, []string{again[2].CaseID}, res.Redelivered)

	byID, _ := publishedRows(t, w.Root())
	assert.Equal(t, map[string]int{written[0].CaseID: 1, written[1].CaseID: 2, written[2].CaseID: 1, fresh.CaseID: 1}, byID)
}

// With file_max_age, the digests are committed with the segment and the merge that publishes it:
// a batch delivered again is written once whether the crash came before the merge or after.
func TestABatchDeliveredAgainAfterASegmentsMergeIsWrittenOnce(t *testing.T) {
	w := skippingRedelivered(t, newSegmentWriter(t, 1000))
	written := fixtureCases(t)
	_, err := w.Write(written)
	require.NoError(t, err)
	ReleaseOwner(w) // killed before the merge

	adopting := restart(t, w)
	res, err := adopting.Write(fixtureCases(t))
	require.NoError(t, err)
	assert.ElementsMatch(t, idsOf(written), res.Redelivered, "the adopted segment holds them")
	_, err = adopting.Flush(true)
	require.NoError(t, err)
	require.NoError(t, adopting.Close())

	res, err = restart(t, w).Write(fixtureCases(t))
	require.NoError(t, err)
	assert.ElementsMatch(t, idsOf(written), res.Redelivered, "the merge kept them")
	byID, _ := publishedRows(t, w.Root())
	assert.Equal(t, map[string]int{written[0].CaseID: 1, written[1].CaseID: 1, written[2].CaseID: 1}, byID)
}

// Without SkipRedelivered (no persistent queue) a case sent again is written again: no digest is
// taken.
func TestWithoutSkipRedeliveredEveryDeliveryIsWritten(t *testing.T) {
	w := newWriter(t)
	_, err := w.Write(fixtureCases(t))
	require.NoError(t, err)
	res, err := restart(t, w).Write(fixtureCases(t))
	require.NoError(t, err)
	assert.Empty(t, res.Redelivered)
	assert.Empty(t, tree(t, StagingOf(w)), "no digest kept in staging")
}
