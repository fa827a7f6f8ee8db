package wireapi

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Anthropic's structured output is read as Chat's response_format is: the format object as
// compact JSON with sorted keys, and output type "json". The GA spelling (output_config.format)
// and the beta one (output_format) are the same format, so a recording made with one matches a
// request sent with the other.
func TestMessagesRequestReadsOutputFormat(t *testing.T) {
	const msgs = `"model":"claude-sonnet-4-5","max_tokens":64,"messages":[{"role":"user","content":"Weather in Paris?"}]`
	const schema = `{"type":"json_schema","schema":{"type":"object","properties":{"temp_c":{"type":"number"}}}}`
	const want = `{"schema":{"properties":{"temp_c":{"type":"number"}},"type":"object"},"type":"json_schema"}`
	for name, body := range map[string]string{
		"GA":                  `{` + msgs + `,"output_config":{"format":` + schema + `}}`,
		"GA with effort":      `{` + msgs + `,"output_config":{"effort":"low","format":` + schema + `}}`,
		"beta":                `{` + msgs + `,"output_format":` + schema + `}`,
		"beta, GA null":       `{` + msgs + `,"output_format":` + schema + `,"output_config":{"format":null}}`,
		"GA, beta null":       `{` + msgs + `,"output_format":null,"output_config":{"format":` + schema + `}}`,
		"beta, config effort": `{` + msgs + `,"output_format":` + schema + `,"output_config":{"effort":"high"}}`,
	} {
		r, err := ParseMessagesRequest([]byte(body))
		require.NoError(t, err, name)
		assert.Equal(t, "json", r.Params.OutputType, name)
		assert.Equal(t, want, r.Params.ResponseFormat, name)
	}

	for name, body := range map[string]string{
		"none":           `{` + msgs + `}`,
		"nulls":          `{` + msgs + `,"output_format":null,"output_config":null}`,
		"effort only":    `{` + msgs + `,"output_config":{"effort":"low"}}`,
		"format is null": `{` + msgs + `,"output_config":{"format":null}}`,
	} {
		r, err := ParseMessagesRequest([]byte(body))
		require.NoError(t, err, name)
		assert.Empty(t, r.Params.OutputType, name)
		assert.Empty(t, r.Params.ResponseFormat, name)
	}

	// A format type the API may add later is kept, without an output type (as for Chat).
	r, err := ParseMessagesRequest([]byte(`{` + msgs + `,"output_config":{"format":{"type":"grammar","grammar":"x"}}}`))
	require.NoError(t, err)
	assert.Empty(t, r.Params.OutputType)
	assert.Equal(t, `{"grammar":"x","type":"grammar"}`, r.Params.ResponseFormat)
}

// A badly shaped output format is refused naming the field, as the API would, instead of read
// as no format: a request for JSON must not match a recording made for text.
func TestMessagesRequestRefusesMalformedOutputFormat(t *testing.T) {
	const msgs = `"model":"m","max_tokens":64,"messages":[{"role":"user","content":"x"}]`
	const schema = `{"type":"json_schema","schema":{"type":"object"}}`
	for body, param := range map[string]string{
		`{` + msgs + `,"output_config":"json"}`:                                                   "output_config",
		`{` + msgs + `,"output_config":[]}`:                                                       "output_config",
		`{` + msgs + `,"output_config":{"format":"json_schema"}}`:                                 "output_config.format",
		`{` + msgs + `,"output_config":{"format":{}}}`:                                            "output_config.format.type",
		`{` + msgs + `,"output_config":{"format":{"type":1}}}`:                                    "output_config.format.type",
		`{` + msgs + `,"output_format":true}`:                                                     "output_format",
		`{` + msgs + `,"output_format":{"schema":{}}}`:                                            "output_format.type",
		`{` + msgs + `,"output_format":` + schema + `,"output_config":{"format":` + schema + `}}`: "output_format",
	} {
		_, err := ParseMessagesRequest([]byte(body))
		var re *RequestError
		require.True(t, errors.As(err, &re), body)
		assert.Equal(t, param, re.Param, body)
		assert.NotContains(t, re.Message, "json_schema", "the error names the field, never the value")
	}
}

// The output format of recorded request parameters (OpenInference's llm.invocation_parameters
// holds the whole request but its messages) is read by the same rules.
func TestMessagesOutputFormatOfRecordedParameters(t *testing.T) {
	format, outputType, err := MessagesOutputFormat([]byte(`{"model":"m","max_tokens":5,"output_format":{"schema":{"type":"object"},"type":"json_schema"}}`))
	require.NoError(t, err)
	assert.Equal(t, `{"schema":{"type":"object"},"type":"json_schema"}`, format)
	assert.Equal(t, "json", outputType)

	format, outputType, err = MessagesOutputFormat([]byte(`{"model":"m","max_tokens":5}`))
	require.NoError(t, err)
	assert.Empty(t, format+outputType)

	_, _, err = MessagesOutputFormat([]byte(`{"output_config":{"format":5}}`))
	var re *RequestError
	require.True(t, errors.As(err, &re))
	assert.Equal(t, "output_config.format", re.Param)
}
