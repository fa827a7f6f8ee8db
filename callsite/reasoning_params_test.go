package callsite_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/callsite"
	"github.com/reprise-dev/reprise/wireapi"
)

// messagesBody is a live Anthropic Messages request with extra members, read as the replay
// endpoint reads it.
func messagesBody(t *testing.T, extra string) callsite.Request {
	t.Helper()
	p, err := wireapi.ParseMessagesRequest([]byte(`{"model":"claude-sonnet-4-5","max_tokens":4096,"messages":[{"role":"user","content":"Weather in Paris?"}]` + extra + `}`))
	require.NoError(t, err)
	return callsite.Request{Model: p.Params.RequestModel, Messages: p.Messages, Tools: p.Tools, Params: p.Params}
}

// A recording made with a reasoning effort lists it, and a live request with another effort
// (or none) gets another id: an answer reasoned at "low" is not the answer to "high".
func TestReasoningEffortIsInTheID(t *testing.T) {
	low := chatBody(t, `,"reasoning_effort":"low"`)
	fields := low.RecordedFields()
	require.Equal(t, []string{callsite.FieldReasoningEffort, callsite.FieldV2}, fields)
	assert.Equal(t, low.ID(fields), chatBody(t, `,"reasoning_effort":"low"`).ID(fields))
	assert.NotEqual(t, low.ID(fields), chatBody(t, `,"reasoning_effort":"high"`).ID(fields))
	assert.NotEqual(t, low.ID(fields), chatBody(t, "").ID(fields))

	summary := chatBody(t, `,"reasoning":{"effort":"low","summary":"auto"}`) // the Responses spelling, as recorded parameters hold it
	fields = summary.RecordedFields()
	require.Equal(t, []string{callsite.FieldReasoningEffort, callsite.FieldReasoningSummary, callsite.FieldV2}, fields)
	assert.Equal(t, summary.ID(fields), chatBody(t, `,"reasoning_effort":"low","reasoning":{"summary":"auto"}`).ID(fields))
	assert.NotEqual(t, summary.ID(fields), chatBody(t, `,"reasoning":{"effort":"low","summary":"detailed"}`).ID(fields))
}

// Anthropic's thinking is its own field: another budget is another request, and thinking
// disabled (the API's default) is the field left out.
func TestThinkingIsInTheID(t *testing.T) {
	budget := messagesBody(t, `,"thinking":{"type":"enabled","budget_tokens":2048}`)
	fields := budget.RecordedFields()
	require.Contains(t, fields, callsite.FieldThinking)
	assert.Equal(t, budget.ID(fields), messagesBody(t, `,"thinking":{"budget_tokens":2048,"type":"enabled"}`).ID(fields))
	assert.NotEqual(t, budget.ID(fields), messagesBody(t, `,"thinking":{"type":"enabled","budget_tokens":8192}`).ID(fields))
	assert.NotEqual(t, budget.ID(fields), messagesBody(t, `,"thinking":{"type":"adaptive"}`).ID(fields))
	assert.NotEqual(t, budget.ID(fields), messagesBody(t, "").ID(fields))

	disabled := messagesBody(t, `,"thinking":{"type":"disabled"}`)
	fields = disabled.RecordedFields()
	require.Contains(t, fields, callsite.FieldThinking)
	assert.Equal(t, disabled.ID(fields), messagesBody(t, "").ID(fields))
}

// A recording without them (every recording made before they were read) keeps its id and
// ignores them in a live request.
func TestARecordingWithoutReasoningIgnoresIt(t *testing.T) {
	plain := chatBody(t, "")
	fields := plain.RecordedFields()
	require.Equal(t, []string{callsite.FieldV2}, fields)
	live := chatBody(t, `,"reasoning_effort":"high","reasoning":{"summary":"auto"},"thinking":{"type":"enabled","budget_tokens":1024}`)
	assert.Equal(t, plain.ID(fields), live.ID(fields))
	assert.Equal(t, plain.ID(nil), live.ID(nil), "version 1")
}
