package dataset

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/replaycase"
)

// The ids of an adoption are forgotten an hour after it, and the oldest adoptions first when
// more than maxAdoptedIDs are held; an id that is not 32 hex digits is never held.
func TestAdoptedCaseIDsAreForgottenAfterAnHourAndPastTheBound(t *testing.T) {
	id := replaycase.ID("d4263ddf29d4d69a7c3c210379b94a58", "8b727ad3b0efe21a")
	_, ok := caseIDKey(id)
	assert.True(t, ok)
	_, ok = caseIDKey("not-a-case-id")
	assert.False(t, ok)
	now := time.Now()
	marked := func() []*replaycase.Case { return []*replaycase.Case{{CaseID: id, Resent: true}} }

	a := &adoptedCaseIDs{}
	a.add([]caseIDRow{{CaseID: id}}, now)
	_, dropped := a.dropResent(marked(), now.Add(adoptedIDsFor-time.Minute))
	assert.Equal(t, []string{id}, dropped, "within the hour")
	kept, dropped := a.dropResent(marked(), now.Add(adoptedIDsFor+time.Minute))
	assert.Empty(t, dropped, "an hour after the adoption")
	assert.Len(t, kept, 1)

	a = &adoptedCaseIDs{}
	a.add([]caseIDRow{{CaseID: id}}, now)
	// A second adoption counted as holding the bound's ids (a map that size would take ~96 MiB).
	a.adoptions.add(expiringSet[[16]byte, telemetryCount]{until: now.Add(adoptedIDsFor), keys: map[[16]byte]telemetryCount{}, n: maxAdoptedIDs}, maxAdoptedIDs, now)
	_, dropped = a.dropResent(marked(), now)
	assert.Empty(t, dropped, "the oldest adoption is forgotten past the bound")
}

// Past the bound, the ids of the files published last are the ones remembered: a crash leaves
// its copies in the newest files, so the oldest ids are forgotten first, as between adoptions.
func TestTheNewestPublishedCaseIDsAreRememberedPastTheBound(t *testing.T) {
	root := t.TempDir()
	part := filepath.Join(root, Cases, PartitionKey+"=2026-12-07")
	require.NoError(t, os.MkdirAll(part, 0o755))
	now := time.Now()
	writeIDs := func(name string, rows []caseIDRow, modified time.Time) {
		path := filepath.Join(part, name)
		require.NoError(t, parquet.WriteFile(path, rows, parquet.KeyValueMetadata(SchemaVersionKey, SchemaVersion)))
		require.NoError(t, os.Chtimes(path, modified, modified))
	}
	older := make([]caseIDRow, maxAdoptedIDs)
	for i := range older {
		older[i].CaseID = fmt.Sprintf("%032x", i+1)
	}
	writeIDs("a.parquet", older, now.Add(-30*time.Minute))
	last := replaycase.ID("d4263ddf29d4d69a7c3c210379b94a58", "8b727ad3b0efe21a")
	writeIDs("b.parquet", []caseIDRow{{CaseID: last}}, now.Add(-time.Minute)) // written just before the crash

	a := &adoptedCaseIDs{}
	a.addRead(readPublished(root, now), now)
	_, dropped := a.dropResent([]*replaycase.Case{{CaseID: last, Resent: true}}, now)
	assert.Equal(t, []string{last}, dropped, "the copy published last is remembered")
}
