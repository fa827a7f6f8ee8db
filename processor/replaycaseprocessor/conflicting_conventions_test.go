package replaycaseprocessor

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/internal/pdatawalk"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/replaycase"
)

// A model call whose span records two models in two conventions (gen_ai.request.model and
// OpenInference's invocation parameters) is stored with one of them: by default the case is
// quarantined conflicting_conventions (evidence check consistent_conventions); without the
// check it is accepted.
func TestConflictingConventionsQuarantineByDefault(t *testing.T) {
	for _, tc := range []struct {
		name    string
		mutate  func(*Config)
		flagged bool
	}{
		{"default", nil, true},
		{"without the check", func(c *Config) {
			c.Evidence.Require = slices.DeleteFunc(allChecks(), func(n string) bool { return n == "consistent_conventions" })
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, tc.mutate)
			td := testfixtures.Traces(t, testfixtures.OpenInference)
			edited := 0
			for s := range pdatawalk.Spans(td) {
				if _, ok := s.Span.Attributes().Get("llm.invocation_parameters"); ok {
					s.Span.Attributes().PutStr("gen_ai.request.model", "another-model")
					edited++
				}
			}
			require.Positive(t, edited)
			h.sendTraces(td)
			h.advance(3 * time.Second)
			cases := h.cases()
			require.Len(t, cases, 1)
			c := cases[0]
			assert.Equal(t, tc.flagged, c.HasReason(replaycase.ReasonConflictingConventions), "reasons %v", reasonCodes(c))
			if tc.flagged {
				assert.Equal(t, replaycase.StatusQuarantined, c.Status)
			} else {
				assert.Equal(t, replaycase.StatusAccepted, c.Status, "reasons %v", c.Reasons)
			}
			h.shutdown()
		})
	}
}
