package replayext

import (
	"net/http"
	"time"
)

// Each route reads its request's body, up to max_request_body_size, before it answers: without
// a bound on the requests answered at once, a burst of clients (or one client opening many
// connections) would make the server hold that many bodies. limitRequests answers at most
// max_concurrent_requests at once. A request past it waits a little for another to end (a
// burst of a test suite's parallel agents passes), then gets a 503 with Retry-After in its
// API's error shape, which the OpenAI and Anthropic SDKs retry. It waits before its body is
// read: a waiting request holds its connection, not its body.

// defaultBusyWait is how long a request waits for a slot before its 503.
const defaultBusyWait = time.Second

func (r *replay) limitRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		select {
		case r.slots <- struct{}{}:
		default:
			if !r.waitForSlot(w, req) {
				return
			}
		}
		defer func() { <-r.slots }()
		next.ServeHTTP(w, req)
	})
}

// waitForSlot waits up to busyWait for a slot and reports whether it took one; when it did
// not, it has answered the request (503), or the client is gone.
func (r *replay) waitForSlot(w http.ResponseWriter, req *http.Request) bool {
	wait := time.NewTimer(r.busyWait)
	defer wait.Stop()
	select {
	case r.slots <- struct{}{}:
		return true
	case <-req.Context().Done():
		return false
	case <-wait.C:
	}
	r.telemetry.ExtensionReplayRequestsBusy.Add(req.Context(), 1)
	w.Header().Set("Retry-After", "1")
	writeAPIError(w, req, http.StatusServiceUnavailable, "server_error",
		"the replay server is answering max_concurrent_requests requests already: retry", nil)
	return false
}
