package wireapi

import "fmt"

// RequestError is a request body the API would refuse. Message never quotes the request: the
// body may hold personal data, and an error that echoes it is an oracle for guessed values.
type RequestError struct {
	// Param is the offending field as a path (messages[1].content), "" for the whole body.
	Param string
	// Code is OpenAI's machine-readable code: invalid_json, invalid_type, missing_required_parameter, invalid_value.
	Code    string
	Message string
}

func (e *RequestError) Error() string { return e.Message }

func invalidType(param, want string) *RequestError {
	return &RequestError{Param: param, Code: "invalid_type", Message: fmt.Sprintf("Invalid type for '%s': expected %s.", param, want)}
}

func missing(param string) *RequestError {
	return &RequestError{Param: param, Code: "missing_required_parameter", Message: fmt.Sprintf("Missing required parameter: '%s'.", param)}
}

func invalidValue(param, want string) *RequestError {
	return &RequestError{Param: param, Code: "invalid_value", Message: fmt.Sprintf("Invalid value for '%s': expected %s.", param, want)}
}
