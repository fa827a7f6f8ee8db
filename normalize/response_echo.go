package normalize

import "fmt"

// responseEchoFields are the members of the parameters responseEcho reads.
var responseEchoFields = []string{"id", "created_at"}

// responseEcho reports invocation parameters that are a Responses API response's echo of its
// settings (with the response's "id" and "created_at", which no request carries) instead of
// what the client sent: their "model" is the dated model that answered, and their top_p and
// tool_choice are the defaults the API filled in, so the request they stand for is unknown.
// openinference-instrumentation-openai-agents (1.3 to 2.6 at least) records these. nil when
// the parameters are a request's.
func responseEcho(params map[string]any) error {
	id, _ := params["id"].(string)
	if _, created := params["created_at"]; id == "" || !created {
		return nil
	}
	return fmt.Errorf("holds the parameters of response %q, not those the request sent, so the requested model and "+
		"sampling parameters were not recorded (openinference-instrumentation-openai-agents writes the response's; "+
		"instrument the OpenAI client with openinference-instrumentation-openai)", id)
}
