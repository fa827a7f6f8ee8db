package wireapi

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// parallel_tool_calls, verbosity and logit_bias are read from Chat Completions and (but
// logit_bias, which it has not) the Responses API onto the case model's fields.
func TestRequestsReadToolAndOutputSettings(t *testing.T) {
	chat, err := ParseChatRequest([]byte(`{"model":"gpt-5-mini","messages":[{"role":"user","content":"Paris?"}],` +
		`"parallel_tool_calls":false,"verbosity":"low","logit_bias":{"50256":-100,"1734":5.5}}`))
	require.NoError(t, err)
	require.NotNil(t, chat.Params.ParallelToolCalls)
	assert.False(t, *chat.Params.ParallelToolCalls)
	assert.Equal(t, "low", chat.Params.Verbosity)
	assert.Equal(t, `{"1734":5.5,"50256":-100}`, chat.Params.LogitBias)

	responses, err := ParseResponsesRequest([]byte(`{"model":"gpt-5-mini","input":"Paris?","parallel_tool_calls":true,"text":{"verbosity":"high"}}`))
	require.NoError(t, err)
	require.NotNil(t, responses.Params.ParallelToolCalls)
	assert.True(t, *responses.Params.ParallelToolCalls)
	assert.Equal(t, "high", responses.Params.Verbosity)

	plain, err := ParseChatRequest([]byte(`{"model":"gpt-5-mini","messages":[{"role":"user","content":"Paris?"}],"logit_bias":null,"verbosity":null}`))
	require.NoError(t, err)
	assert.Nil(t, plain.Params.ParallelToolCalls)
	assert.Empty(t, plain.Params.Verbosity+plain.Params.LogitBias, "null is not sent")
}

// A malformed setting is a 400 naming it: read as absent it would let the request match a
// recording made without it.
func TestRequestsRefuseMalformedToolAndOutputSettings(t *testing.T) {
	chat := `"model":"m","messages":[{"role":"user","content":"x"}]`
	for body, tc := range map[string]struct {
		parse func([]byte) error
		param string
	}{
		`{` + chat + `,"parallel_tool_calls":"no"}`:              {chatParse, "parallel_tool_calls"},
		`{` + chat + `,"verbosity":1}`:                           {chatParse, "verbosity"},
		`{` + chat + `,"logit_bias":[1]}`:                        {chatParse, "logit_bias"},
		`{` + chat + `,"logit_bias":{"50256":"-100"}}`:           {chatParse, "logit_bias.50256"},
		`{"model":"m","input":"x","parallel_tool_calls":1}`:      {responsesParse, "parallel_tool_calls"},
		`{"model":"m","input":"x","text":{"verbosity":["low"]}}`: {responsesParse, "text.verbosity"},
	} {
		err := tc.parse([]byte(body))
		var re *RequestError
		require.True(t, errors.As(err, &re), body)
		assert.Equal(t, tc.param, re.Param, body)
	}
}
