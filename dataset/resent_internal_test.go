package dataset

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

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
	// A second adoption counted as holding the bound's ids (a map that size would take 40 MB).
	a.adoptions.add(expiringSet[[16]byte, telemetryCount]{until: now.Add(adoptedIDsFor), keys: map[[16]byte]telemetryCount{}, n: maxAdoptedIDs}, maxAdoptedIDs, now)
	_, dropped = a.dropResent(marked(), now)
	assert.Empty(t, dropped, "the oldest adoption is forgotten past the bound")
}
