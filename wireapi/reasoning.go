package wireapi

import (
	"encoding/json"

	"github.com/reprise-dev/reprise/replaycase"
)

// The reasoning settings of a request, read onto the case model's fields: how hard the model
// is asked to think (Chat Completions' reasoning_effort, the Responses API's reasoning.effort,
// Anthropic's output_config.effort, all ReasoningEffort), the reasoning summary the Responses
// API is asked for, and Anthropic's thinking object, kept as sent (its budget does not map
// onto an effort). A recording made with other settings is another model call.

// reasoningFields are the request members that carry them. A Chat Completions body holds
// reasoning_effort; recorded invocation parameters (OpenInference) may hold the Responses
// API's reasoning or Anthropic's thinking instead, and are read with the Chat parser.
type reasoningFields struct {
	ReasoningEffort *string          `json:"reasoning_effort"`
	Reasoning       *reasoningObject `json:"reasoning"`
	Thinking        json.RawMessage  `json:"thinking"`
}

// reasoningObject is the Responses API's reasoning configuration.
type reasoningObject struct {
	Effort  *string `json:"effort"`
	Summary *string `json:"summary"`
}

// CheckReasoningParams reports a malformed reasoning setting of recorded request parameters
// (OpenInference's llm.invocation_parameters) as a *RequestError naming it; nil when they are
// well formed or absent.
func CheckReasoningParams(body []byte) error {
	var f reasoningFields
	if err := decodeObject(body, &f); err != nil {
		return err
	}
	var mc replaycase.ModelConfig
	return f.read(&mc)
}

// read sets the reasoning settings of f on mc. reasoning_effort wins over a reasoning.effort
// beside it.
func (f reasoningFields) read(mc *replaycase.ModelConfig) (err error) {
	if f.ReasoningEffort != nil {
		mc.ReasoningEffort = *f.ReasoningEffort
	}
	if r := f.Reasoning; r != nil {
		if r.Effort != nil && mc.ReasoningEffort == "" {
			mc.ReasoningEffort = *r.Effort
		}
		if r.Summary != nil {
			mc.ReasoningSummary = *r.Summary
		}
	}
	mc.Thinking, _, err = typedObject(f.Thinking, "thinking")
	return err
}

// messagesEffort is the effort of an Anthropic output_config, "" when none is set. An
// output_config that is no object is refused by readOutputFormat.
func messagesEffort(outputConfig json.RawMessage) (string, error) {
	if kind(outputConfig) != '{' {
		return "", nil
	}
	var config struct {
		Effort json.RawMessage `json:"effort"`
	}
	_ = json.Unmarshal(outputConfig, &config)
	switch kind(config.Effort) {
	case 0, 'n':
		return "", nil
	case '"':
		return rawText(config.Effort, "output_config.effort")
	}
	return "", invalidType("output_config.effort", "a string")
}
