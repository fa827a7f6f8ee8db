package wireapi

import "encoding/json"

// outputTypes are the gen_ai.output.type values of the format types the APIs document; a
// type not listed (a newer one) is kept in the format's JSON without an output type.
var outputTypes = map[string]string{"text": "text", "json_object": "json", "json_schema": "json"}

// OutputType is the gen_ai.output.type a response format type asks for ("" for a type not
// listed): normalize reads the format type some instrumentations record alone
// (gen_ai.openai.request.response_format, before semconv 1.31) with it.
func OutputType(formatType string) string { return outputTypes[formatType] }

// ResponsesOutputFormat reads the output format of recorded Responses request parameters
// (OpenInference's llm.invocation_parameters): text.format as compact JSON with sorted keys and
// the output type it asks for, "" and "" when none is asked for, as ParseResponsesRequest reads
// it. Errors are *RequestError naming the field.
func ResponsesOutputFormat(body []byte) (format, outputType string, err error) {
	var f struct {
		Text *responsesText `json:"text"` // the member of responsesBody, decoded as it is there
	}
	if err := decodeObject(body, &f); err != nil || f.Text == nil {
		return "", "", err
	}
	return outputFormat(f.Text.Format, "text.format")
}

// outputFormat reads a response format object (Chat Completions response_format, Responses
// text.format) at param: the object as compact JSON with sorted keys, and the output type it
// asks for. Absent or null, it is "" and "": the request did not ask for a format.
func outputFormat(raw json.RawMessage, param string) (format, outputType string, err error) {
	format, formatType, err := typedObject(raw, param)
	return format, outputTypes[formatType], err
}

// typedObject reads an object with a string member type at param (a response format,
// Anthropic's thinking): the object as compact JSON with sorted keys, and its type. Absent or
// null, it is "" and "".
func typedObject(raw json.RawMessage, param string) (text, objectType string, err error) {
	switch kind(raw) {
	case 0, 'n':
		return "", "", nil
	case '{':
	default:
		return "", "", invalidType(param, "an object")
	}
	var f struct {
		Type *string `json:"type"`
	}
	if json.Unmarshal(raw, &f) != nil {
		return "", "", invalidType(param+".type", "a string")
	}
	if f.Type == nil {
		return "", "", missing(param + ".type")
	}
	text, err = rawText(raw, param)
	return text, *f.Type, err
}
