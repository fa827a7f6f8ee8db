package replayext

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/reprise-dev/reprise/callsite"
	"github.com/reprise-dev/reprise/replaycase"
	"github.com/reprise-dev/reprise/wireapi"
)

// anthropicMessages replays an Anthropic Messages call, matched like any model call; every
// answer replay itself gives is in Anthropic's shape (errors included), live answers are the
// upstream's own.
func (r *replay) anthropicMessages(w http.ResponseWriter, req *http.Request) {
	aw := &anthropicErrors{ResponseWriter: w}
	defer aw.finish()
	caseID, raw, release, ok := r.begin(aw, req)
	if !ok {
		return
	}
	defer release()
	in, ok := decodeModelRequest(r, aw, r.messagesRequests, raw, wireapi.ParseMessagesRequest, func(p *wireapi.MessagesRequest) callsite.Request {
		return callsite.Request{Model: p.Params.RequestModel, Messages: p.Messages, Tools: p.Tools, Params: p.Params}
	}, nil)
	if !ok {
		return
	}
	r.modelCall(aw, req, apiAnthropic, raw, caseID, in.requested, in.ids, func(w http.ResponseWriter, h hit, st *replaycase.Step) {
		if in.parsed.Stream {
			wireapi.WriteMessagesResponse(w, in.parsed, st)
			return
		}
		r.writeAnswer(w, answerKey{step: h, api: "messages"}, st, wireapi.MessagesResponseJSON)
	})
}

// anthropicErrors rewrites the errors replay writes in OpenAI's shape ({"error": {"message",
// "type", "param", "code", …}}) into Anthropic's ({"type": "error", "error": {"type",
// "message", …}}), so that the Anthropic SDKs raise them with the message intact. Successful
// and live answers pass through untouched.
type anthropicErrors struct {
	http.ResponseWriter
	status int
	buf    bytes.Buffer
}

func (a *anthropicErrors) WriteHeader(status int) {
	if status >= 400 && a.Header().Get(headerLive) != "true" {
		a.status = status
		return
	}
	a.ResponseWriter.WriteHeader(status)
}

func (a *anthropicErrors) Write(b []byte) (int, error) {
	if a.status != 0 {
		return a.buf.Write(b)
	}
	return a.ResponseWriter.Write(b)
}

func (a *anthropicErrors) Flush() {
	if f, ok := a.ResponseWriter.(http.Flusher); ok && a.status == 0 {
		f.Flush()
	}
}

func (a *anthropicErrors) Unwrap() http.ResponseWriter { return a.ResponseWriter }

// anthropicErrorTypes maps replay's OpenAI error types to Anthropic's.
var anthropicErrorTypes = map[string]string{"server_error": "api_error"}

// anthropicStatusTypes are Anthropic's error types of the statuses that have their own.
var anthropicStatusTypes = map[int]string{http.StatusUnauthorized: "authentication_error", http.StatusRequestEntityTooLarge: "request_too_large"}

func (a *anthropicErrors) finish() {
	if a.status == 0 {
		return
	}
	var body struct {
		Error map[string]any `json:"error"`
	}
	if json.Unmarshal(a.buf.Bytes(), &body) != nil || body.Error == nil {
		a.ResponseWriter.WriteHeader(a.status)
		_, _ = a.ResponseWriter.Write(a.buf.Bytes())
		return
	}
	e := body.Error
	if typ, _ := e["type"].(string); anthropicErrorTypes[typ] != "" {
		e["type"] = anthropicErrorTypes[typ]
	}
	if typ := anthropicStatusTypes[a.status]; typ != "" {
		e["type"] = typ
	}
	delete(e, "param")
	delete(e, "code")
	writeJSON(a.ResponseWriter, a.status, map[string]any{"type": "error", "error": e})
}
