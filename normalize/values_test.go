package normalize

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A value followed by a stray closing bracket is not JSON: the decoder alone stops before it.
func TestParseJSONRejectsTrailingData(t *testing.T) {
	for _, s := range []string{`"\b"]`, `{"a":1}}`, `[1]]`, `1 2`, `{} x`} {
		_, err := parseJSON(s)
		assert.ErrorContains(t, err, "trailing data", s)
	}
	v, err := parseJSON(" [1, \"a\"] \n")
	require.NoError(t, err)
	assert.Len(t, v, 2)
	_, err = parseJSON(`[{"a":`)
	assert.ErrorIs(t, err, errTruncated)
}
