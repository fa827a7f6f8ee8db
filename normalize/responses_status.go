package normalize

// responsesFinishReason is the finish reason of a recorded Responses response body that says
// the model was cut ("status": "incomplete", with incomplete_details.reason: max_output_tokens,
// content_filter), "" for any other body. OpenInference's JS OpenAI instrumentation records no
// llm.finish_reason for a Responses call: without this, an answer cut at the token limit was
// replayed as a completed one.
func responsesFinishReason(body map[string]any) string {
	if mapStr(body, "object") != "response" || mapStr(body, "status") != "incomplete" {
		return ""
	}
	details, _ := body["incomplete_details"].(map[string]any)
	return FinishReason(mapStr(details, "reason"))
}
