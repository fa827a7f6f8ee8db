package wireapi

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/replaycase"
)

// The output format and the sampling parameters beyond temperature and top_p are read from
// each API's request: a request for JSON output is another request than one for text.
func TestChatRequestReadsOutputFormatAndSampling(t *testing.T) {
	r, err := ParseChatRequest([]byte(`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Paris?"}],
		"n":2,"top_k":40,"frequency_penalty":0.5,"presence_penalty":-0.25,
		"response_format":{"type":"json_schema","json_schema":{"strict":true,"name":"weather","schema":{"type":"object","properties":{"temp_c":{"type":"number"}}}}}}`))
	require.NoError(t, err)
	n, k, freq, pres := int64(2), int64(40), 0.5, -0.25
	assert.Equal(t, replaycase.ModelConfig{RequestModel: "gpt-4o-mini", ChoiceCount: &n, TopK: &k, FrequencyPenalty: &freq, PresencePenalty: &pres,
		OutputType: "json", ResponseFormat: `{"json_schema":{"name":"weather","schema":{"properties":{"temp_c":{"type":"number"}},"type":"object"},"strict":true},"type":"json_schema"}`}, r.Params)

	for format, output := range map[string]string{`{"type":"json_object"}`: "json", `{"type":"text"}`: "text", `{"type":"grammar","grammar":"x"}`: ""} {
		mc, err := ParseChatParams([]byte(`{"model":"m","response_format":` + format + `}`))
		require.NoError(t, err, format)
		assert.Equal(t, output, mc.OutputType, format)
		assert.JSONEq(t, format, mc.ResponseFormat, format)
	}
	mc, err := ParseChatParams([]byte(`{"model":"m","response_format":null}`))
	require.NoError(t, err)
	assert.Equal(t, replaycase.ModelConfig{RequestModel: "m"}, mc, "null is not sent")
}

func TestChatRequestRefusesMalformedOutputFormatAndSampling(t *testing.T) {
	msgs := `"model":"m","messages":[{"role":"user","content":"x"}]`
	for body, param := range map[string]string{
		`{` + msgs + `,"response_format":"json"}`:         "response_format",
		`{` + msgs + `,"response_format":{}}`:             "response_format.type",
		`{` + msgs + `,"response_format":{"type":5}}`:     "response_format.type",
		`{` + msgs + `,"n":1.5}`:                          "n",
		`{` + msgs + `,"top_k":"40"}`:                     "top_k",
		`{` + msgs + `,"frequency_penalty":"high"}`:       "frequency_penalty",
		`{` + msgs + `,"presence_penalty":{"value":0.1}}`: "presence_penalty",
	} {
		_, err := ParseChatRequest([]byte(body))
		var re *RequestError
		require.True(t, errors.As(err, &re), body)
		assert.Equal(t, param, re.Param, body)
	}
}

func TestResponsesRequestReadsTextFormat(t *testing.T) {
	r, err := ParseResponsesRequest([]byte(`{"model":"gpt-4.1-mini","input":"Paris?","top_p":0.9,
		"text":{"verbosity":"low","format":{"type":"json_schema","name":"weather","strict":true,"schema":{"type":"object"}}}}`))
	require.NoError(t, err)
	assert.Equal(t, "json", r.Params.OutputType)
	assert.Equal(t, `{"name":"weather","schema":{"type":"object"},"strict":true,"type":"json_schema"}`, r.Params.ResponseFormat)

	plain, err := ParseResponsesRequest([]byte(`{"model":"m","input":"x","text":{"verbosity":"low"}}`))
	require.NoError(t, err)
	assert.Equal(t, replaycase.ModelConfig{RequestModel: "m", Verbosity: "low"}, plain.Params, "no format asked for, the verbosity read")

	for body, param := range map[string]string{
		`{"model":"m","input":"x","text":"json"}`:                "text",
		`{"model":"m","input":"x","text":{"format":[]}}`:         "text.format",
		`{"model":"m","input":"x","text":{"format":{"name":1}}}`: "text.format.type",
	} {
		_, err := ParseResponsesRequest([]byte(body))
		var re *RequestError
		require.True(t, errors.As(err, &re), body)
		assert.Equal(t, param, re.Param, body)
	}
}

func TestMessagesRequestReadsTopK(t *testing.T) {
	r, err := ParseMessagesRequest([]byte(`{"model":"claude-sonnet-4-5","max_tokens":64,"top_k":40,"messages":[{"role":"user","content":"Paris?"}]}`))
	require.NoError(t, err)
	require.NotNil(t, r.Params.TopK)
	assert.Equal(t, int64(40), *r.Params.TopK)

	_, err = ParseMessagesRequest([]byte(`{"model":"m","max_tokens":64,"top_k":0.5,"messages":[{"role":"user","content":"x"}]}`))
	var re *RequestError
	require.True(t, errors.As(err, &re))
	assert.Equal(t, "top_k", re.Param)
}
