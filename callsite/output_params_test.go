package callsite_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/callsite"
	"github.com/reprise-dev/reprise/replaycase"
	"github.com/reprise-dev/reprise/wireapi"
)

// chatBody is a live Chat Completions request with extra members, read as the replay endpoint
// reads it.
func chatBody(t *testing.T, extra string) callsite.Request {
	t.Helper()
	p, err := wireapi.ParseChatRequest([]byte(`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Weather in Paris?"}]` + extra + `}`))
	require.NoError(t, err)
	return callsite.Request{Model: p.Params.RequestModel, Messages: p.Messages, Tools: p.Tools, Params: p.Params}
}

// A recording that has the output format or a sampling parameter lists it, and a live request
// that asks for another one gets another id: a request for JSON is not answered with a
// recording made for text.
func TestOutputFormatAndSamplingAreInTheID(t *testing.T) {
	text := chatBody(t, `,"response_format":{"type":"text"}`)
	fields := text.RecordedFields()
	assert.Equal(t, []string{callsite.FieldOutputType, callsite.FieldResponseFormat, callsite.FieldV2}, fields)
	for _, changed := range []string{
		`,"response_format":{"type":"json_object"}`,
		`,"response_format":{"type":"json_schema","json_schema":{"name":"weather","schema":{"type":"object"}}}`,
	} {
		assert.NotEqual(t, text.ID(fields), chatBody(t, changed).ID(fields), changed)
	}
	schema := func(name string) string {
		return `,"response_format":{"type":"json_schema","json_schema":{"name":"` + name + `","schema":{"type":"object"}}}`
	}
	weather := chatBody(t, schema("weather"))
	assert.NotEqual(t, weather.ID(weather.RecordedFields()), chatBody(t, schema("forecast")).ID(weather.RecordedFields()), "another schema")
	assert.Equal(t, weather.ID(weather.RecordedFields()), chatBody(t, ` ,"response_format":{"json_schema":{"schema":{"type":"object"},"name":"weather"},"type":"json_schema"}`).ID(weather.RecordedFields()),
		"the same schema, its members in another order")

	sampling := chatBody(t, `,"n":2,"top_k":40,"frequency_penalty":0.5,"presence_penalty":-0.25`)
	fields = sampling.RecordedFields()
	assert.Equal(t, []string{callsite.FieldFrequencyPenalty, callsite.FieldChoiceCount, callsite.FieldPresencePenalty, callsite.FieldTopK, callsite.FieldV2}, fields)
	for _, changed := range []string{
		`,"n":3,"top_k":40,"frequency_penalty":0.5,"presence_penalty":-0.25`,
		`,"n":2,"top_k":41,"frequency_penalty":0.5,"presence_penalty":-0.25`,
		`,"n":2,"top_k":40,"frequency_penalty":0.6,"presence_penalty":-0.25`,
		`,"n":2,"top_k":40,"frequency_penalty":0.5,"presence_penalty":0.25`,
		`,"n":2,"top_k":40,"frequency_penalty":0.5`,
	} {
		assert.NotEqual(t, sampling.ID(fields), chatBody(t, changed).ID(fields), changed)
	}
}

// The APIs' defaults (n = 1, text output) are the field left out: a recording that lists the
// default matches a request that does not send it, and the other way round.
func TestDefaultOutputAndChoiceCountAreTheFieldLeftOut(t *testing.T) {
	plain := chatBody(t, "")
	one := int64(1)
	recorded := plain
	recorded.Params.ChoiceCount, recorded.Params.OutputType = &one, "text" // Agent Framework records n = 1
	fields := recorded.RecordedFields()
	require.Equal(t, []string{callsite.FieldChoiceCount, callsite.FieldOutputType, callsite.FieldV2}, fields)
	assert.Equal(t, recorded.ID(fields), plain.ID(fields))
	assert.Equal(t, recorded.ID(fields), chatBody(t, `,"n":1,"response_format":{"type":"text"}`).ID(fields))
	assert.NotEqual(t, recorded.ID(fields), chatBody(t, `,"n":2`).ID(fields))
	assert.NotEqual(t, recorded.ID(fields), chatBody(t, `,"response_format":{"type":"json_object"}`).ID(fields))
}

// A recording without these fields (every recording made before they were read, and one
// whose instrumentation does not record them) ignores them in a live request, as it ignores a
// seed it did not record: its id and field set are those it always had.
func TestARecordingWithoutTheFieldsIgnoresThem(t *testing.T) {
	recorded := callsite.Request{Model: "gpt-4o-mini", Messages: []replaycase.Message{{Role: "user", Parts: []replaycase.Part{{Type: "text", Content: "Weather in Paris?"}}}}}
	fields := recorded.RecordedFields()
	require.Equal(t, []string{callsite.FieldV2}, fields)
	live := chatBody(t, `,"seed":7,"n":2,"top_k":40,"frequency_penalty":0.5,"presence_penalty":0.5,"response_format":{"type":"json_object"}`)
	assert.Equal(t, recorded.ID(fields), live.ID(fields))
	assert.Equal(t, recorded.ID(nil), live.ID(nil), "version 1")
}
