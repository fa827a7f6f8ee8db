package wireapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
)

// writeJSONBody answers 200 with v as JSON, HTML characters unescaped as the APIs send them.
func writeJSONBody(w http.ResponseWriter, v any) { writeJSON(w, encodeJSON(v)) }

// writeJSON answers 200 with an encoded JSON body.
func writeJSON(w http.ResponseWriter, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// encodeJSON is v as newline-terminated JSON, HTML characters unescaped as the APIs send them.
func encodeJSON(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return buf.Bytes()
}

// eventStream writes Server-Sent Events, each flushed as it is written.
type eventStream struct {
	w       http.ResponseWriter
	flusher http.Flusher
	buf     bytes.Buffer
	enc     *json.Encoder
}

// newEventStream answers 200 with an event stream.
func newEventStream(w http.ResponseWriter) *eventStream {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	s := &eventStream{w: w}
	s.flusher, _ = w.(http.Flusher)
	s.enc = json.NewEncoder(&s.buf)
	s.enc.SetEscapeHTML(false)
	return s
}

// send writes one event: an `event:` line when name is not empty (Responses and Anthropic
// name their events, Chat Completions does not), then v as the data line.
func (s *eventStream) send(name string, v any) {
	s.buf.Reset()
	if name != "" {
		fmt.Fprintf(&s.buf, "event: %s\n", name)
	}
	s.buf.WriteString("data: ")
	_ = s.enc.Encode(v) // ends with the newline
	s.buf.WriteByte('\n')
	s.raw(s.buf.Bytes())
}

// raw writes bytes as they are and flushes them.
func (s *eventStream) raw(b []byte) {
	_, _ = s.w.Write(b)
	if s.flusher != nil {
		s.flusher.Flush()
	}
}
