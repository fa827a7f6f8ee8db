package callsite_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/callsite"
	"github.com/reprise-dev/reprise/wireapi"
)

// responsesBody is a live Responses request with extra members, read as the replay endpoint
// reads it.
func responsesBody(t *testing.T, extra string) callsite.Request {
	t.Helper()
	p, err := wireapi.ParseResponsesRequest([]byte(`{"model":"gpt-5-mini","input":"Weather in Paris?"` + extra + `}`))
	require.NoError(t, err)
	return callsite.Request{Model: p.Params.RequestModel, Messages: p.Input, Tools: p.Tools, Params: p.Params}
}

// A recording made with parallel_tool_calls, verbosity or logit_bias lists it, and a live
// request with another value (or, but for the defaults, none) gets another id.
func TestRequestSettingsAreInTheID(t *testing.T) {
	rec := chatBody(t, `,"parallel_tool_calls":false,"verbosity":"low","logit_bias":{"50256":-100}`)
	assertSameAsReference(t, rec, "settings")
	fields := rec.RecordedFields()
	require.Equal(t, []string{callsite.FieldLogitBias, callsite.FieldParallelToolCalls, callsite.FieldV2, callsite.FieldVerbosity}, fields)
	assert.Equal(t, rec.ID(fields), chatBody(t, `,"logit_bias":{"50256":-100.0},"verbosity":"low","parallel_tool_calls":false`).ID(fields))
	for _, other := range []string{
		`,"parallel_tool_calls":true,"verbosity":"low","logit_bias":{"50256":-100}`,
		`,"verbosity":"low","logit_bias":{"50256":-100}`,
		`,"parallel_tool_calls":false,"verbosity":"high","logit_bias":{"50256":-100}`,
		`,"parallel_tool_calls":false,"logit_bias":{"50256":-100}`,
		`,"parallel_tool_calls":false,"verbosity":"low","logit_bias":{"50256":-50}`,
		`,"parallel_tool_calls":false,"verbosity":"low"`,
	} {
		assert.NotEqual(t, rec.ID(fields), chatBody(t, other).ID(fields), other)
	}

	// The Responses API's spellings are the same fields.
	responses := responsesBody(t, `,"parallel_tool_calls":false,"text":{"verbosity":"low"}`)
	fields = responses.RecordedFields()
	require.Equal(t, []string{callsite.FieldParallelToolCalls, callsite.FieldV2, callsite.FieldVerbosity}, fields)
	assert.NotEqual(t, responses.ID(fields), responsesBody(t, `,"parallel_tool_calls":false,"text":{"verbosity":"high"}`).ID(fields))
	assert.NotEqual(t, responses.ID(fields), responsesBody(t, `,"text":{"verbosity":"low"}`).ID(fields))
}

// The APIs' defaults, parallel_tool_calls true and an empty logit_bias, are the field left
// out: such a recording matches a request that does not send them.
func TestDefaultRequestSettingsAreLeftOut(t *testing.T) {
	rec := chatBody(t, `,"parallel_tool_calls":true,"logit_bias":{}`)
	fields := rec.RecordedFields()
	require.Equal(t, []string{callsite.FieldLogitBias, callsite.FieldParallelToolCalls, callsite.FieldV2}, fields)
	assert.Equal(t, rec.ID(fields), chatBody(t, "").ID(fields))
	assert.NotEqual(t, rec.ID(fields), chatBody(t, `,"parallel_tool_calls":false`).ID(fields))
}

// A recording without them (every recording made before they were read) keeps its id and
// ignores them in a live request.
func TestARecordingWithoutRequestSettingsIgnoresThem(t *testing.T) {
	plain := chatBody(t, "")
	fields := plain.RecordedFields()
	require.Equal(t, []string{callsite.FieldV2}, fields)
	live := chatBody(t, `,"parallel_tool_calls":false,"verbosity":"high","logit_bias":{"1":5}`)
	assert.Equal(t, plain.ID(fields), live.ID(fields))
	assert.Equal(t, plain.ID(nil), live.ID(nil), "version 1")
}
