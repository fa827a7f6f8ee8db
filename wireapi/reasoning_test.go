package wireapi

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The reasoning settings are read from each API's request onto the case model's fields:
// Chat's reasoning_effort, the Responses API's reasoning.effort and reasoning.summary,
// Anthropic's output_config.effort (as reasoning_effort) and thinking (kept as sent).
func TestRequestsReadReasoningSettings(t *testing.T) {
	chat, err := ParseChatRequest([]byte(`{"model":"o4-mini","messages":[{"role":"user","content":"Paris?"}],"reasoning_effort":"minimal"}`))
	require.NoError(t, err)
	assert.Equal(t, "minimal", chat.Params.ReasoningEffort)
	assert.Empty(t, chat.Params.ReasoningSummary)

	responses, err := ParseResponsesRequest([]byte(`{"model":"o4-mini","input":"Paris?","reasoning":{"effort":"high","summary":"auto"}}`))
	require.NoError(t, err)
	assert.Equal(t, "high", responses.Params.ReasoningEffort)
	assert.Equal(t, "auto", responses.Params.ReasoningSummary)
	nulls, err := ParseResponsesRequest([]byte(`{"model":"o4-mini","input":"Paris?","reasoning":{"effort":null,"summary":null}}`))
	require.NoError(t, err)
	assert.Empty(t, nulls.Params.ReasoningEffort+nulls.Params.ReasoningSummary, "null is not sent")

	msgs := `"model":"claude-sonnet-4-5","max_tokens":4096,"messages":[{"role":"user","content":"Paris?"}]`
	thinking, err := ParseMessagesRequest([]byte(`{` + msgs + `,"thinking":{"type":"enabled","budget_tokens":2048},"output_config":{"effort":"low"}}`))
	require.NoError(t, err)
	assert.Equal(t, `{"budget_tokens":2048,"type":"enabled"}`, thinking.Params.Thinking)
	assert.Equal(t, "low", thinking.Params.ReasoningEffort)
	plain, err := ParseMessagesRequest([]byte(`{` + msgs + `}`))
	require.NoError(t, err)
	assert.Empty(t, plain.Params.Thinking+plain.Params.ReasoningEffort)
}

// A malformed reasoning setting is a 400 naming it, as the APIs refuse it: read as absent it
// would let the request match a recording made without reasoning.
func TestRequestsRefuseMalformedReasoningSettings(t *testing.T) {
	chat := `"model":"m","messages":[{"role":"user","content":"x"}]`
	msgs := `"model":"m","max_tokens":64,"messages":[{"role":"user","content":"x"}]`
	for body, tc := range map[string]struct {
		parse func([]byte) error
		param string
	}{
		`{` + chat + `,"reasoning_effort":3}`:                    {chatParse, "reasoning_effort"},
		`{"model":"m","input":"x","reasoning":"high"}`:           {responsesParse, "reasoning"},
		`{"model":"m","input":"x","reasoning":{"effort":1}}`:     {responsesParse, "reasoning.effort"},
		`{"model":"m","input":"x","reasoning":{"summary":true}}`: {responsesParse, "reasoning.summary"},
		`{` + msgs + `,"thinking":"enabled"}`:                    {messagesParse, "thinking"},
		`{` + msgs + `,"thinking":{"budget_tokens":1024}}`:       {messagesParse, "thinking.type"},
		`{` + msgs + `,"output_config":{"effort":["low"]}}`:      {messagesParse, "output_config.effort"},
	} {
		err := tc.parse([]byte(body))
		var re *RequestError
		require.True(t, errors.As(err, &re), body)
		assert.Equal(t, tc.param, re.Param, body)
	}
}

func chatParse(b []byte) error      { _, err := ParseChatRequest(b); return err }
func responsesParse(b []byte) error { _, err := ParseResponsesRequest(b); return err }
func messagesParse(b []byte) error  { _, err := ParseMessagesRequest(b); return err }
