package casediff

import (
	"slices"

	"github.com/reprise-dev/reprise/callsite"
)

// comparableIDs gives each model call of a and b a call-site id over the same optional fields.
// A stored id covers the fields its recording had (call_site_fields) and names its version (the
// "v2" marker): a baseline recorded by another instrumentation, or before version 2, has other
// ids for the same requests. When every call of both runs covers the same fields the stored ids
// are compared; otherwise each call's id is computed again over the fields all of them cover,
// so the same request still lines up with itself.
func comparableIDs(a, b []llmStep) (idsA, idsB []string) {
	var common []string
	same := true
	for i, s := range append(slices.Clip(a), b...) {
		f := s.step.CallSiteFields
		switch {
		case i == 0:
			common = slices.Clone(f)
		case !slices.Equal(f, common):
			same = false
			common = slices.DeleteFunc(common, func(name string) bool { return !slices.Contains(f, name) })
		}
	}
	ids := func(steps []llmStep) []string {
		out := make([]string, len(steps))
		for i, s := range steps {
			if same {
				out[i] = s.step.CallSiteID
			} else if s.step.CallSiteID != "" {
				out[i] = callsite.FromStep(s.step).ID(common)
			}
		}
		return out
	}
	return ids(a), ids(b)
}
