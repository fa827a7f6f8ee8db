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
// API's reasoning or Anthropic's thinking and output_config instead, and are read with the
// Chat parser.
type reasoningFields struct {
	ReasoningEffort *string          `json:"reasoning_effort"`
	Reasoning       *reasoningObject `json:"reasoning"`
	Thinking        json.RawMessage  `json:"thinking"`
	OutputConfig    json.RawMessage  `json:"output_config"`
	// anthropic is set for a request to Anthropic's own API, which takes thinking as an object
	// only; on Chat Completions OpenAI-compatible providers take other shapes (chatThinking).
	anthropic bool
}

// reasoningObject is the Responses API's reasoning configuration.
type reasoningObject struct {
	Effort  *string `json:"effort"`
	Summary *string `json:"summary"`
}

// read sets the reasoning settings of f on mc. reasoning_effort wins over a reasoning.effort
// beside it, and both over an output_config.effort.
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
	if mc.ReasoningEffort == "" {
		if mc.ReasoningEffort, err = messagesEffort(f.OutputConfig); err != nil {
			return err
		}
	}
	if f.anthropic {
		mc.Thinking, _, err = typedObject(f.Thinking, "thinking")
	} else {
		mc.Thinking, err = chatThinking(f.Thinking)
	}
	return err
}

// chatThinking is a thinking setting sent to Chat Completions, which OpenAI does not define
// but OpenAI-compatible providers take: Anthropic's object (recorded parameters hold it too),
// or a switch, a boolean or a string (thinking: true, "enabled"), kept as compact JSON. It
// changes the answer, so any other shape is refused naming it rather than read as absent.
func chatThinking(raw json.RawMessage) (string, error) {
	switch kind(raw) {
	case 't', 'f':
		return rawText(raw, "thinking")
	case '"':
		s, err := rawText(raw, "thinking")
		quoted, _ := json.Marshal(s) // kept as JSON: the string "true" is not the boolean
		return string(quoted), err
	case 0, 'n', '{':
		text, _, err := typedObject(raw, "thinking")
		return text, err
	}
	return "", invalidType("thinking", "an object with a string type, a boolean or a string")
}

// messagesEffort is the effort of an Anthropic output_config, "" when none is set. An
// output_config that is no object is refused by readOutputFormat (Anthropic's parser,
// MessagesOutputFormat for recorded parameters).
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
