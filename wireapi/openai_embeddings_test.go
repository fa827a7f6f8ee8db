package wireapi

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseEmbeddingsRequest(t *testing.T) {
	r, err := ParseEmbeddingsRequest([]byte(`{"model":"text-embedding-3-small","input":"Paris","encoding_format":"base64"}`))
	require.NoError(t, err)
	assert.Equal(t, &EmbeddingsRequest{Model: "text-embedding-3-small", Input: []string{"Paris"}, Base64: true}, r)
	r, err = ParseEmbeddingsRequest([]byte(`{"model":"m","input":["a",""]}`))
	require.NoError(t, err)
	assert.Equal(t, []string{"a", ""}, r.Input, "an empty text is a text")
}

// A null input or text is refused, not read as the empty text, and every error names the field.
func TestParseEmbeddingsRequestNamesTheField(t *testing.T) {
	for _, c := range []struct{ body, param, code string }{
		{`{"model":"m","input":null}`, "input", "missing_required_parameter"},
		{`{"model":"m"}`, "input", "missing_required_parameter"},
		{`{"model":"m","input":["a",null]}`, "input[1]", "invalid_type"},
		{`{"model":"m","input":[]}`, "input", "invalid_type"},
		{`{"model":"m","input":[[1,2]]}`, "input", "invalid_type"},
		{`{"model":"m","input":5}`, "input", "invalid_type"},
		{`{"model":5,"input":"a"}`, "model", "invalid_type"},
		{`{"model":null,"input":"a"}`, "model", "missing_required_parameter"},
		{`{"model":"m","input":"a","encoding_format":"int8"}`, "encoding_format", "invalid_value"},
		{`{"model":"m","input":"a"`, "", "invalid_json"},
	} {
		_, err := ParseEmbeddingsRequest([]byte(c.body))
		var re *RequestError
		require.True(t, errors.As(err, &re), "%s: %v", c.body, err)
		assert.Equal(t, c.param, re.Param, c.body)
		assert.Equal(t, c.code, re.Code, c.body)
	}
}
