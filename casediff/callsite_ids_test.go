package casediff

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/callsite"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/replaycase"
)

// A baseline recorded before call-site ids had a version 2 (its calls' fields lack the "v2"
// marker, its ids are version 1) still lines its calls up with a new run's by request: a run that
// makes one more model call first shows that call added, not every later call shifted. The
// stored ids of the two versions never match, so the calls were paired in order.
func TestVersion1BaselineLinesUpWithAVersion2Run(t *testing.T) {
	run := fixtureCase(t, testfixtures.OTelEvents)
	first := slices.IndexFunc(run.Steps, func(s replaycase.Step) bool { return s.Kind == replaycase.StepLLM })
	require.GreaterOrEqual(t, first, 0)
	require.Contains(t, run.Steps[first].CallSiteFields, callsite.FieldV2)

	baseline := clone(t, run)
	baseline.Steps = slices.Delete(baseline.Steps, first, first+1)
	for i := range baseline.Steps {
		st := &baseline.Steps[i]
		if st.Kind != replaycase.StepLLM {
			continue
		}
		st.CallSiteFields = slices.DeleteFunc(st.CallSiteFields, func(f string) bool { return f == callsite.FieldV2 })
		st.CallSiteID = callsite.FromStep(st).ID(st.CallSiteFields)
	}

	r := Compare(baseline, run)
	assert.Equal(t, 1, r.Counts[ModelCallAdded], "%+v", r.Findings)
	assert.Zero(t, r.Counts[ModelCallRemoved], "%+v", r.Findings)
	for _, f := range r.Findings {
		if f.Type == ModelCallAdded {
			assert.Equal(t, fmt.Sprintf("steps[%d]", first), f.PathB)
		}
		assert.NotEqual(t, PromptChanged, f.Type, "the other calls pair with their own requests: %+v", f)
	}
}
