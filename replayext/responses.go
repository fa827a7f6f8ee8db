package replayext

import (
	"errors"
	"net/http"

	"github.com/reprise-dev/reprise/callsite"
	"github.com/reprise-dev/reprise/replaycase"
	"github.com/reprise-dev/reprise/wireapi"
)

// responses replays an OpenAI Responses call. Its conversation may continue recorded
// responses by reference (previous_response_id, item_reference items); those resolve against
// the case the route names, else the case the session was served last, and the resolved
// conversation is matched like a Chat Completions request: the case model is the same for
// both APIs, so a call recorded through either replays through either.
func (r *replay) responses(w http.ResponseWriter, req *http.Request) {
	caseID, raw, release, ok := r.begin(w, req)
	if !ok {
		return
	}
	defer release()
	// Scrubbed before resolving: what references resolve to is recorded, hence scrubbed already.
	in, ok := decodeModelRequest(r, w, r.responsesRequests, raw, wireapi.ParseResponsesRequest, func(p *wireapi.ResponsesRequest) callsite.Request {
		return callsite.Request{Model: p.Params.RequestModel, Messages: p.Input, Tools: p.Tools, Params: p.Params}
	}, func(in *modelInput[*wireapi.ResponsesRequest]) {
		in.parsed.Input = in.requested.Messages
		if references(in.parsed) {
			in.ids = nil // the conversation is resolved against a case on each request: so are its ids
		}
	})
	if !ok {
		return
	}
	parsed, requested := in.parsed, in.requested
	if in.ids != nil {
		r.modelCall(w, req, apiOpenAI, raw, caseID, requested, in.ids, func(w http.ResponseWriter, h hit, st *replaycase.Step) { r.writeResponse(w, h, parsed, st) })
		return
	}
	refCase := caseID
	if refCase == "" {
		refCase = r.sessionCase(req)
	}
	var c *replaycase.Case
	if refCase != "" {
		if c, ok = r.recordedCase(w, req, refCase); !ok {
			return
		}
	}
	var err error
	if requested.Messages, err = parsed.Resolve(func(id string, byCall bool) *replaycase.Step { return recordedResponse(c, id, byCall) }); err != nil {
		var bad *wireapi.RequestError
		if refCase == "" && errors.As(err, &bad) {
			// Nothing to look the reference up in: say why, and what base URL has a case.
			bad.Message += " This session has been served no recorded model call yet, so the base URL that names no case has none to look it up in: use /v1/cases/{case_id}/openai/v1."
		}
		writeRequestError(w, err)
		return
	}
	r.modelCall(w, req, apiOpenAI, raw, caseID, requested, nil, func(w http.ResponseWriter, h hit, st *replaycase.Step) { r.writeResponse(w, h, parsed, st) })
}

// references reports whether a Responses request continues recorded responses
// (previous_response_id, item_reference items): its conversation is then resolved per request.
func references(req *wireapi.ResponsesRequest) bool {
	if req.PreviousResponseID != "" {
		return true
	}
	for _, m := range req.Input {
		if len(m.Parts) == 1 && m.Parts[0].Type == wireapi.PartItemReference {
			return true
		}
	}
	return false
}

// writeResponse answers a Responses request with recorded step st (item h).
func (r *replay) writeResponse(w http.ResponseWriter, h hit, req *wireapi.ResponsesRequest, st *replaycase.Step) {
	if req.Stream {
		wireapi.WriteResponsesResponse(w, req, st)
		return
	}
	r.writeAnswer(w, answerKey{step: h, api: "responses", variant: req.PreviousResponseID}, st, func(st *replaycase.Step) []byte {
		return wireapi.ResponsesResponseJSON(req, st)
	})
}

// getResponse: GET /v1/cases/{case_id}/openai/v1/responses/{response_id} → the recorded
// response, as the API's retrieve endpoint answers it: JSON, or its events with stream=true.
// Without a case in the path (GET /openai/v1/responses/{response_id}, the SDK's retrieve on
// the unscoped base URL) the id is looked up in the case the session was served last, as a
// POST's references are.
func (r *replay) getResponse(w http.ResponseWriter, req *http.Request) {
	caseID, ok := r.scopedCase(w, req)
	if !ok {
		return
	}
	opts, err := wireapi.ParseRetrieveQuery(req.URL.Query())
	if err != nil {
		writeRequestError(w, err)
		return
	}
	if caseID == "" {
		if caseID = r.sessionCase(req); caseID == "" {
			writeError(w, http.StatusNotFound, "not_found_error", "no recorded response with that id: this session has been served no recorded model call yet", nil)
			return
		}
	}
	c, ok := r.recordedCase(w, req, caseID)
	if !ok {
		return
	}
	st := recordedResponse(c, req.PathValue("response_id"), false)
	if st == nil {
		writeError(w, http.StatusNotFound, "not_found_error", "no recorded response with that id in case "+caseID, nil)
		return
	}
	wireapi.WriteRetrievedResponse(w, opts, st)
}

// recordedResponse is wireapi.Recorded for case c: the model step that answered as response id
// id, or, byCall, the one whose output made the function call with call id (or recorded item
// id) id; nil when there is none (or no case).
func recordedResponse(c *replaycase.Case, id string, byCall bool) *replaycase.Step {
	if c == nil {
		return nil
	}
	for i := range c.Steps {
		st := &c.Steps[i]
		if st.Kind != replaycase.StepLLM {
			continue
		}
		if !byCall && wireapi.ResponsesID(st) == id {
			return st
		}
		for _, m := range st.OutputMessages {
			for _, p := range m.Parts {
				if byCall && p.Type == "tool_call" && (p.ID == id || p.ItemID == id) {
					return st
				}
			}
		}
	}
	return nil
}
