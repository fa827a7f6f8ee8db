package wireapi

import (
	"net/http"
	"net/url"
	"strconv"

	"github.com/reprise-dev/reprise/replaycase"
)

// RetrieveOptions are the query parameters of GET /v1/responses/{id} that change the answer:
// with stream=true the API streams the stored response as the Server-Sent Events of its
// creation, from the event after sequence number starting_after.
type RetrieveOptions struct {
	Stream bool
	// StartingAfter is the sequence number the stream starts after; -1 for the whole stream.
	StartingAfter int
}

// ParseRetrieveQuery reads the query of a retrieve request strictly: stream is true or false,
// starting_after a non-negative integer. Errors are *RequestError naming the parameter. Other
// parameters (include, include_obfuscation) change nothing a recording holds and are ignored.
func ParseRetrieveQuery(q url.Values) (RetrieveOptions, error) {
	o := RetrieveOptions{StartingAfter: -1}
	if v, ok := q["stream"]; ok {
		switch v[len(v)-1] {
		case "true":
			o.Stream = true
		case "false":
		default:
			return o, invalidValue("stream", "true or false")
		}
	}
	if v, ok := q["starting_after"]; ok {
		n, err := strconv.Atoi(v[len(v)-1])
		if err != nil || n < 0 {
			return o, invalidValue("starting_after", "a non-negative integer")
		}
		o.StartingAfter = n
	}
	return o, nil
}

// WriteRetrievedResponse answers a retrieve request for recorded step st: the response object,
// or, when o asks to stream, the events a POST that asked to stream gets, each with its
// sequence number (those up to o.StartingAfter left out).
func WriteRetrievedResponse(w http.ResponseWriter, o RetrieveOptions, st *replaycase.Step) {
	req := &ResponsesRequest{}
	if o.Stream {
		writeResponsesStream(w, req, st, o.StartingAfter)
		return
	}
	writeJSON(w, ResponsesResponseJSON(req, st))
}
