package scrub

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// quickEnough fails when none of up to three runs of f finishes within limit. The limits guard
// against work that grows faster than the input (a quadratic scan takes minutes on these inputs,
// not seconds); one slow run on a loaded shared machine, under the race detector, is not that,
// so the best of three is what is compared.
func quickEnough(t *testing.T, limit time.Duration, f func(), msgAndArgs ...any) {
	t.Helper()
	best := time.Duration(math.MaxInt64)
	for range 3 {
		began := time.Now()
		f()
		if best = min(best, time.Since(began)); best < limit {
			return
		}
	}
	assert.Less(t, best, limit, msgAndArgs...)
}
