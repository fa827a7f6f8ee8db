package replayext

import (
	"net/http"
	"net/url"
	"strings"
)

// withAnthropicV1 serves a Messages request sent to …/anthropic/messages as the one sent to
// …/anthropic/v1/messages: the path a client whose base URL is …/anthropic/v1 (the Vercel AI
// SDK's @ai-sdk/anthropic) makes of the ANTHROPIC_BASE_URL that the Anthropic SDKs take without
// the /v1. The path is given its /v1 so that hybrid mode forwards /v1/messages upstream
// (apiSuffix), as it does for the Anthropic SDKs.
func withAnthropicV1(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, req *http.Request) {
		// A copy, as http.StripPrefix makes one: the path values the route matched stay.
		withV1 := new(http.Request)
		*withV1 = *req
		withV1.URL = new(url.URL)
		*withV1.URL = *req.URL
		withV1.URL.Path, withV1.URL.RawPath = strings.TrimSuffix(req.URL.Path, "/messages")+"/v1/messages", ""
		next(w, withV1)
	}
}
