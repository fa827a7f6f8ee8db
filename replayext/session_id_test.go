package replayext

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestTraceIDOfTraceparent(t *testing.T) {
	const id = "4bf92f3577b34da6a3ce929d0e0e4736"
	for tp, want := range map[string]string{
		"00-" + id + "-00f067aa0ba902b7-01":                       id,
		"00-00000000000000000000000000000000-00f067aa0ba902b7-01": "", // invalid: all zeros
		"00-" + id + "-00f067aa0ba902b7":                          "", // three fields
		"00-" + id + "-00f067aa0ba902b7-01-extra":                 "", // five fields
		"00-" + id[:31] + "-00f067aa0ba902b7-01":                  "", // short trace id
		"":                                                        "",
	} {
		got, ok := traceIDOf(tp)
		assert.Equal(t, want, got, tp)
		assert.Equal(t, want != "", ok, tp)
	}
}
