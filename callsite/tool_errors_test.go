package callsite_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/reprise-dev/reprise/callsite"
	"github.com/reprise-dev/reprise/replaycase"
)

// A recording covers is_error when its source records the mark or a result failed; the mark
// is in the canonical form only when true, so a request without failures keeps its id.
func TestToolResultFailureField(t *testing.T) {
	result := replaycase.Part{Type: "tool_call_response", ID: "toolu_1", Response: "service down"}
	req := func(failed, recorded bool) callsite.Request {
		p := result
		p.Error = failed
		return callsite.Request{Model: "claude-haiku-4-5", ToolErrorsRecorded: recorded, Messages: []replaycase.Message{
			{Role: "user", Parts: []replaycase.Part{{Type: "text", Content: "Weather in Paris?"}}},
			{Role: "tool", Parts: []replaycase.Part{p}}}}
	}
	assert.Equal(t, []string{callsite.FieldV2}, req(false, false).RecordedFields())
	assert.Equal(t, []string{callsite.FieldIsError, callsite.FieldV2}, req(false, true).RecordedFields())
	assert.Equal(t, []string{callsite.FieldIsError, callsite.FieldV2}, req(true, false).RecordedFields())

	with := []string{callsite.FieldIsError, callsite.FieldV2}
	without := []string{callsite.FieldV2}
	assert.Equal(t, req(false, true).ID(without), req(false, true).ID(with), "no failure: the id it had before")
	assert.NotEqual(t, req(false, true).ID(with), req(true, true).ID(with))
	assert.Equal(t, req(false, true).ID(without), req(true, true).ID(without), "a field set without it ignores the mark")
	c := req(true, true).Canonical(with)["messages"].([]any)[1].(map[string]any)
	assert.Equal(t, true, c["is_error"])
}
