package replayext

import (
	"net/http"
	"strings"

	"go.uber.org/zap"
)

// The answers the HTTP server gives before any route runs (credentials that auth refuses, a
// body it cannot decode, no such route, a route that takes another method) were plain text,
// which the SDKs raise as an error without a message. These give them in the error shape of
// the API the path belongs to, as every route's own errors are.

// writeAPIError answers an error in the shape of the API of req's path: Anthropic's under an
// …/anthropic/ base URL, OpenAI's elsewhere.
func writeAPIError(w http.ResponseWriter, req *http.Request, status int, typ, message string, extra map[string]any) {
	if anthropicPath(req.URL.Path) {
		aw := &anthropicErrors{ResponseWriter: w}
		defer aw.finish()
		w = aw
	}
	writeError(w, status, typ, message, extra)
}

// anthropicPath reports whether path is under an Anthropic base URL: /anthropic/… or
// /v1/cases/{case_id}/anthropic/….
func anthropicPath(path string) bool {
	if rest, ok := strings.CutPrefix(path, "/v1/cases/"); ok {
		_, rest, _ = strings.Cut(rest, "/")
		path = "/" + rest
	}
	return strings.HasPrefix(path, "/anthropic/")
}

// serverError answers the errors of confighttp's server (confighttp.WithErrorHandler). Its
// message is logged, not answered: it may quote the request (a Content-Encoding).
func (r *replay) serverError(w http.ResponseWriter, req *http.Request, msg string, status int) {
	r.debugRequestValue("replay: request refused before its route", "error", msg, zap.Int("status", status))
	if status == http.StatusUnauthorized {
		writeAPIError(w, req, status, "invalid_request_error", "the replay server's auth refused the request's credentials",
			map[string]any{"code": "invalid_api_key"})
		return
	}
	writeAPIError(w, req, status, "invalid_request_error", "the request body could not be decoded (its Content-Encoding)", nil)
}

// noRoute answers a request that no route of mux takes: 405 with Allow when the path has a
// route for another method, else 404. It is mux's catch-all route ("/"), so it never runs for
// a path and method that have a route.
func noRoute(mux *http.ServeMux) http.HandlerFunc {
	return func(w http.ResponseWriter, req *http.Request) {
		var allow []string
		for _, m := range []string{http.MethodGet, http.MethodPost} {
			if _, pattern := mux.Handler(&http.Request{Method: m, Host: req.Host, URL: req.URL}); pattern != "/" {
				allow = append(allow, m)
			}
		}
		if len(allow) > 0 {
			w.Header().Set("Allow", strings.Join(allow, ", "))
			writeAPIError(w, req, http.StatusMethodNotAllowed, "invalid_request_error", "this route takes "+strings.Join(allow, " or ")+" only", nil)
			return
		}
		if base, ok := missingV1(mux, req); ok {
			writeAPIError(w, req, http.StatusNotFound, "not_found_error", "replay has no route at this path, but has one with v1/ after "+base+
				": the client's base URL must end in "+base+"/v1 here", nil)
			return
		}
		writeAPIError(w, req, http.StatusNotFound, "not_found_error", "replay has no route at this path: it answers chat/completions, responses and "+
			"embeddings under an OpenAI base URL, v1/messages under an Anthropic one, and the /v1/cases, /v1/calls and /v1/divergences listings", nil)
	}
}

// missingV1 returns the API base ("/openai" or "/anthropic") of a path that a route takes once
// v1/ follows that base: the request of a client whose base URL lacks the /v1.
func missingV1(mux *http.ServeMux, req *http.Request) (string, bool) {
	for _, base := range []string{"/openai/", "/anthropic/"} {
		i := strings.Index(req.URL.Path, base)
		if i < 0 || strings.HasPrefix(req.URL.Path[i+len(base):], "v1/") {
			continue
		}
		withV1 := *req.URL
		withV1.Path, withV1.RawPath = req.URL.Path[:i+len(base)]+"v1/"+req.URL.Path[i+len(base):], ""
		if _, pattern := mux.Handler(&http.Request{Method: req.Method, Host: req.Host, URL: &withV1}); pattern != "/" {
			return strings.TrimSuffix(base, "/"), true
		}
	}
	return "", false
}
