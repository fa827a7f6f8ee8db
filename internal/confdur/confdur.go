// Package confdur checks the durations of Reprise's component configurations.
package confdur

import (
	"fmt"
	"time"
)

// Unitless returns an error naming key when d can only be a number written without a unit:
// YAML's 30, or an environment variable's "30", decodes as 30 nanoseconds, which passed every
// "must be positive" check (a retention of 7 deleted every partition but today's, a grace period
// of 15 closed cases at once, a timeout of 5 failed every write). No duration of these
// configurations means less than a millisecond. unit is the one the message suggests (s, m, d).
func Unitless(key string, d time.Duration, unit string) error {
	if d <= 0 || d >= time.Millisecond {
		return nil
	}
	return fmt.Errorf("%s is %s: a number without a unit is nanoseconds; give the unit (%d%s)", key, d, int64(d), unit)
}
