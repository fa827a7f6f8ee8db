package wireapi

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// OpenAI-compatible providers take a thinking switch on Chat Completions as a boolean or a
// string besides the object: it changes the answer, so it is kept as sent (compact JSON), not
// dropped; a shape no provider takes is a 400 naming it. Anthropic's own API takes the object
// only.
func TestChatThinkingShapes(t *testing.T) {
	chat := `"model":"m","messages":[{"role":"user","content":"x"}]`
	for thinking, want := range map[string]string{
		`true`:               `true`,
		`false`:              `false`,
		`"enabled"`:          `"enabled"`,
		`{"type":"enabled"}`: `{"type":"enabled"}`,
		`null`:               ``,
	} {
		r, err := ParseChatRequest([]byte(`{` + chat + `,"thinking":` + thinking + `}`))
		require.NoError(t, err, thinking)
		assert.Equal(t, want, r.Params.Thinking, thinking)
	}
	for _, bad := range []string{`1`, `["enabled"]`, `{"budget_tokens":1024}`} {
		_, err := ParseChatRequest([]byte(`{` + chat + `,"thinking":` + bad + `}`))
		var re *RequestError
		require.True(t, errors.As(err, &re), bad)
		assert.Contains(t, re.Param, "thinking", bad)
	}
	assert.Error(t, messagesParse([]byte(`{"model":"m","max_tokens":64,"messages":[{"role":"user","content":"x"}],"thinking":true}`)))
}
