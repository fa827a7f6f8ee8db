package confdur

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestUnitlessNamesTheKeyAndTheUnitToGive(t *testing.T) {
	assert.EqualError(t, Unitless("retention.cases", 7, "d"), "retention.cases is 7ns: a number without a unit is nanoseconds; give the unit (7d)")
	assert.ErrorContains(t, Unitless("timeout", time.Millisecond-1, "s"), "timeout is 999.999µs")
	for _, d := range []time.Duration{0, -1, time.Millisecond, 30 * time.Second} {
		assert.NoError(t, Unitless("timeout", d, "s"), d) // zero and negative are the callers' to judge
	}
}
