package wireapi

import (
	"encoding/json"
	"sort"

	"github.com/reprise-dev/reprise/replaycase"
)

// The settings of an OpenAI request that shape the answer beside sampling and reasoning:
// whether the model may call several tools in one answer (parallel_tool_calls, Chat
// Completions and the Responses API), how long an answer it is asked for (Chat's verbosity,
// the Responses API's text.verbosity) and Chat's logit_bias, which favours or bans tokens. A
// recording made with other settings is another model call.

// requestSettings are the request members that carry them (text.verbosity is read beside
// them, from the Responses API's text object).
type requestSettings struct {
	ParallelToolCalls *bool           `json:"parallel_tool_calls"`
	Verbosity         *string         `json:"verbosity"`
	LogitBias         json.RawMessage `json:"logit_bias"`
}

// CheckSettingParams reports a malformed reasoning, tool or output setting of recorded request
// parameters (OpenInference's llm.invocation_parameters) as a *RequestError naming it; nil
// when they are well formed or absent.
func CheckSettingParams(body []byte) error {
	var f struct {
		reasoningFields
		requestSettings
	}
	if err := decodeObject(body, &f); err != nil {
		return err
	}
	var mc replaycase.ModelConfig
	if err := f.reasoningFields.read(&mc); err != nil {
		return err
	}
	return f.requestSettings.read(&mc, nil)
}

// read sets the settings of s on mc; the verbosity of text, the Responses API's, counts when s
// has none of its own.
func (s requestSettings) read(mc *replaycase.ModelConfig, text *responsesText) (err error) {
	mc.ParallelToolCalls = s.ParallelToolCalls
	switch {
	case s.Verbosity != nil:
		mc.Verbosity = *s.Verbosity
	case text != nil && text.Verbosity != nil:
		mc.Verbosity = *text.Verbosity
	}
	mc.LogitBias, err = logitBias(s.LogitBias)
	return err
}

// logitBias reads Chat's logit_bias, an object of token ids to numbers, as compact JSON with
// sorted keys; "" when absent or null. A bias that is no number is refused naming its token:
// the API refuses it, and read as sent it would compare as text.
func logitBias(raw json.RawMessage) (string, error) {
	const want = "an object of token ids to numbers"
	switch kind(raw) {
	case 0, 'n':
		return "", nil
	case '{':
	default:
		return "", invalidType("logit_bias", want)
	}
	var bias map[string]json.RawMessage
	if json.Unmarshal(raw, &bias) != nil {
		return "", invalidType("logit_bias", want)
	}
	tokens := make([]string, 0, len(bias))
	for token := range bias {
		tokens = append(tokens, token)
	}
	sort.Strings(tokens) // the first bad one by name, whatever the map's order
	for _, token := range tokens {
		if k := kind(bias[token]); k != '-' && (k < '0' || k > '9') {
			return "", invalidType("logit_bias."+token, "a number")
		}
	}
	return rawText(raw, "logit_bias")
}
