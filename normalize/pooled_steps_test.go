package normalize

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/internal/testfixtures"
)

// Build gathers a trace's steps in a slice it reuses for the next trace (normalizedSteps): a
// case it returned must not change when later builds, of other traces, fill that slice again.
func TestBuildCaseOwnsItsSteps(t *testing.T) {
	runs := []string{testfixtures.OTelEvents, testfixtures.Traceloop, testfixtures.OpenInference, testfixtures.OTelNoContent}
	for _, run := range runs {
		t.Run(run, func(t *testing.T) {
			c, _ := build(t, run)
			want, err := json.Marshal(c)
			require.NoError(t, err)
			require.NotEmpty(t, c.Steps)
			for range 10 { // sync.Pool hands the slice back on this goroutine, unless a GC empties it
				for _, other := range runs {
					build(t, other)
				}
			}
			got, err := json.Marshal(c)
			require.NoError(t, err)
			assert.JSONEq(t, string(want), string(got))
		})
	}
}
