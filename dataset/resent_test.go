package dataset_test

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	. "github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/replaycase"
)

// A collector killed after its exporter staged a batch and before its processor released the
// batch's write-ahead records sends the cases again after the restart, marked Resent. The
// restarted writer adopted the killed one's segment, which holds them: each is written once.
// An unmarked case under an adopted id is a re-drive and is written (a newer row, on purpose),
// and a marked case no adopted segment holds (the crash came before the write) is written too.
func TestACaseSentAgainAfterACrashIsWrittenOnce(t *testing.T) {
	crashed := newSegmentWriter(t, 1000)
	written := fixtureCases(t)
	_, err := crashed.Write(written)
	require.NoError(t, err)
	ReleaseOwner(crashed) // killed: no Flush

	restarted, err := NewWriter(ConfigOf(crashed))
	require.NoError(t, err)
	_, err = restarted.Recover(time.Now().Add(-15 * time.Minute))
	require.NoError(t, err)

	again := fixtureCases(t)
	var resent []string
	for _, c := range again {
		c.Resent = true
		resent = append(resent, c.CaseID)
	}
	redriven := fixtureCases(t)[0] // the same case_id, not marked
	fresh := fixtureCases(t)[1]
	fresh.CaseID = replaycase.ID(fresh.Provenance.TraceID, "never written")
	fresh.Resent = true
	grown := fixtureCases(t)[2] // marked, but built from a span more: one that came late
	grown.Resent = true
	grown.Provenance.SpanCount++
	resent = slices.DeleteFunc(resent, func(id string) bool { return id == grown.CaseID })
	res, err := restarted.Write(append(slices.DeleteFunc(again, func(c *replaycase.Case) bool { return c.CaseID == grown.CaseID }), redriven, fresh, grown))
	require.NoError(t, err)
	assert.ElementsMatch(t, resent, res.Resent, "the cases dropped as written before the crash")
	_, err = restarted.Flush(true)
	require.NoError(t, err)

	byID, _ := publishedRows(t, restarted.Root())
	for _, c := range written {
		want := 1
		if c.CaseID == redriven.CaseID || c.CaseID == grown.CaseID {
			want = 2 // a re-drive, and a case that holds more than the written copy
		}
		assert.Equal(t, want, byID[c.CaseID], "case %s", c.CaseID)
	}
	assert.Equal(t, 1, byID[fresh.CaseID], "a marked case no adopted segment holds is written")
	assert.Len(t, byID, len(written)+1)
}
