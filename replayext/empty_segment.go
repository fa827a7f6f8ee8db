package replayext

import (
	"net/http"
	"strings"
)

// refuseEmptySegments answers 400 for a path with an empty segment instead of letting
// http.ServeMux redirect it to the cleaned path. An unset case id in a client's base URL
// (`/v1/cases//openai/v1/chat/completions`) was redirected to `/v1/cases/openai/v1/...`: curl
// printed nothing, and a client that followed the redirect would have asked for a case named
// "openai". The answer does not echo the path, as no error body echoes the request.
func refuseEmptySegments(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if strings.Contains(req.URL.Path, "//") {
			param := "path"
			if strings.HasPrefix(req.URL.Path, "/v1/cases//") {
				param = "case_id"
			}
			writeAPIError(w, req, http.StatusBadRequest, "invalid_request_error",
				"the path has an empty segment (//): is the case id unset?", map[string]any{"param": param})
			return
		}
		next.ServeHTTP(w, req)
	})
}
