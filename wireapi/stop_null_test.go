package wireapi

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A null among the stop sequences is refused, naming its index, as the API refuses it. It was
// read as "", a stop sequence the caller never sent: the request then got the answer recorded
// for ["a", ""].
func TestANullStopSequenceIsRefusedByItsIndex(t *testing.T) {
	for name, c := range map[string]struct {
		parse func([]byte) error
		body  string
		param string
	}{
		"chat": {func(b []byte) error { _, err := ParseChatRequest(b); return err },
			`{"model":"m","messages":[{"role":"user","content":"x"}],"stop":["a",null]}`, "stop[1]"},
		"chat params": {func(b []byte) error { _, err := ParseChatParams(b); return err },
			`{"model":"m","stop":[null]}`, "stop[0]"},
		"anthropic": {func(b []byte) error { _, err := ParseMessagesRequest(b); return err },
			`{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"x"}],"stop_sequences":["a",null]}`, "stop_sequences[1]"},
	} {
		err := c.parse([]byte(c.body))
		var re *RequestError
		require.True(t, errors.As(err, &re), "%s: %v", name, err)
		assert.Equal(t, c.param, re.Param, name)
		assert.Equal(t, "invalid_type", re.Code, name)
	}

	// Strings, an empty list and null stay as they were.
	r, err := ParseChatRequest([]byte(`{"model":"m","messages":[{"role":"user","content":"x"}],"stop":["a",""]}`))
	require.NoError(t, err)
	assert.Equal(t, []string{"a", ""}, r.Params.Stop)
	m, err := ParseMessagesRequest([]byte(`{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"x"}],"stop_sequences":["a"]}`))
	require.NoError(t, err)
	assert.Equal(t, []string{"a"}, m.Params.Stop)
	m, err = ParseMessagesRequest([]byte(`{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"x"}],"stop_sequences":null}`))
	require.NoError(t, err)
	assert.Nil(t, m.Params.Stop)
}
