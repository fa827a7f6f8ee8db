package replaycase

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Summing usage stops at the largest count instead of wrapping to a negative one.
func TestUsageAddDoesNotWrap(t *testing.T) {
	u := Usage{InputTokens: math.MaxInt64 - 1, TotalTokens: 5}
	u.Add(Usage{InputTokens: 10, TotalTokens: 7})
	assert.Equal(t, Usage{InputTokens: math.MaxInt64, TotalTokens: 12}, u)
}
