package wireapi

import "encoding/json"

// Anthropic's structured outputs: the JSON schema the answer must follow, {"type":
// "json_schema", "schema": {…}}. The GA spelling is output_config.format; the beta one
// (structured-outputs-2025-11-13) is the top-level output_format, which @anthropic-ai/sdk 1.14
// marks deprecated and moves to output_config.format before sending, while raw HTTP clients
// and other SDKs may still send it. Both are read, as Chat's response_format is, so that a
// recording made with one spelling matches a request sent with the other.

// anthropicOutputFields are the request members that carry the output format.
type anthropicOutputFields struct {
	OutputFormat json.RawMessage `json:"output_format"`
	OutputConfig json.RawMessage `json:"output_config"`
}

// MessagesOutputFormat reads the output format of a Messages request body, or of recorded
// request parameters (OpenInference's llm.invocation_parameters): the format as compact JSON
// with sorted keys and the output type it asks for, "" and "" when none is asked for. Errors
// are *RequestError naming the field.
func MessagesOutputFormat(body []byte) (format, outputType string, err error) {
	var f anthropicOutputFields
	if err := decodeObject(body, &f); err != nil {
		return "", "", err
	}
	return f.readOutputFormat()
}

// readOutputFormat is the output format of f: output_config.format or output_format, refused
// when both are set (the SDK refuses that too; which one the API would follow is not
// documented).
func (f anthropicOutputFields) readOutputFormat() (format, outputType string, err error) {
	var config struct {
		Format json.RawMessage `json:"format"`
	}
	switch kind(f.OutputConfig) {
	case 0, 'n':
	case '{':
		if json.Unmarshal(f.OutputConfig, &config) != nil {
			return "", "", invalidType("output_config", "an object")
		}
	default:
		return "", "", invalidType("output_config", "an object")
	}
	ga, gaType, err := outputFormat(config.Format, "output_config.format")
	if err != nil {
		return "", "", err
	}
	beta, betaType, err := outputFormat(f.OutputFormat, "output_format")
	switch {
	case err != nil:
		return "", "", err
	case ga != "" && beta != "":
		return "", "", invalidValue("output_format", "no output_format beside output_config.format (output_format is deprecated)")
	case ga != "":
		return ga, gaType, nil
	}
	return beta, betaType, nil
}
