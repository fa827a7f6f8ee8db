package replayext

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/replaycase"
)

// The read-only endpoints: listing and reading recorded cases, calls and divergences.

// listCases: GET /v1/cases?status=&agent=&since=&until=&limit=&page_token=
func (r *replay) listCases(w http.ResponseWriter, req *http.Request) {
	q := req.URL.Query()
	var since, until time.Time
	for _, p := range []struct {
		name string
		dst  *time.Time
	}{{"since", &since}, {"until", &until}} {
		if v := q.Get(p.name); v != "" {
			t, err := time.Parse(time.RFC3339Nano, v)
			if err != nil { // without err: it quotes the value, and an error body never echoes the request
				writeError(w, http.StatusBadRequest, "invalid_request_error", p.name+" must be an RFC 3339 time", map[string]any{"param": p.name})
				return
			}
			*p.dst = t
		}
	}
	token, limit, ok := pageOf(w, q)
	if !ok {
		return
	}
	var after *caseCursor
	if token != "" {
		c, ok := parseCaseCursor(token)
		if !ok {
			refusePageToken(w, errNotAPageToken)
			return
		}
		after = &c
	}
	status, agent := q.Get("status"), q.Get("agent")
	page, last, more := r.store.list(caseFilter{status: status, agent: agent, since: since, until: until}, after, limit)
	out := struct {
		Cases         []*dataset.CaseSummary `json:"cases"`
		NextPageToken string                 `json:"next_page_token,omitempty"`
	}{}
	var err error
	if out.Cases, err = r.store.summariesOf(req.Context(), page); err != nil {
		r.caseError(w, err)
		return
	}
	if more {
		out.NextPageToken = last.String()
	}
	writeJSON(w, http.StatusOK, out)
}

// pageOf reads a listing's page: limit 1–1000 (default 100) and page_token, a
// next_page_token, which the listing reads, or answers 400 naming the parameter.
func pageOf(w http.ResponseWriter, q url.Values) (token string, limit int, ok bool) {
	limit = 100
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			writeError(w, http.StatusBadRequest, "invalid_request_error", "limit must be between 1 and 1000", map[string]any{"param": "limit"})
			return "", 0, false
		}
		limit = n
	}
	return q.Get("page_token"), limit, true
}

// refusePageToken answers a page_token the listing cannot read, saying why.
func refusePageToken(w http.ResponseWriter, why error) {
	writeError(w, http.StatusBadRequest, "invalid_request_error", why.Error(), map[string]any{"param": "page_token"})
}

func (r *replay) getCase(w http.ResponseWriter, req *http.Request) {
	if c, ok := r.recordedCase(w, req, req.PathValue("case_id")); ok {
		writeJSON(w, http.StatusOK, c)
	}
}

// getCall: GET /v1/calls/{call_site_id} → every recorded occurrence, request and response.
func (r *replay) getCall(w http.ResponseWriter, req *http.Request) {
	id := req.PathValue("call_site_id")
	token, limit, ok := pageOf(w, req.URL.Query())
	if !ok {
		return
	}
	var after *uint32
	if token != "" {
		last, err := parseCallToken(token, r.store.generation)
		if err != nil {
			refusePageToken(w, err)
			return
		}
		after = &last
	}
	// One page of occurrences: a call every run makes (the same first prompt) is recorded in
	// every case, and reading them all into one answer would hold the dataset in memory.
	p := r.store.callsFor(id, after, limit)
	refs, found, more := p.hits, p.all > 0, p.more
	type occurrence struct {
		CaseID string           `json:"case_id"`
		Step   *replaycase.Step `json:"step"`
	}
	out := struct {
		CallSiteID    string       `json:"call_site_id"`
		Occurrences   []occurrence `json:"occurrences"`
		NextPageToken string       `json:"next_page_token,omitempty"`
	}{CallSiteID: id, Occurrences: []occurrence{}}
	for _, h := range refs {
		st, err := r.store.llmStep(req.Context(), h)
		if errors.Is(err, errNoCase) {
			continue // removed since callsFor found it
		}
		if err != nil {
			r.caseError(w, err)
			return
		}
		out.Occurrences = append(out.Occurrences, occurrence{h.caseID, st})
	}
	if !found || len(out.Occurrences) == 0 && after == nil && !more {
		// The id came with the request: the log may name it, the answer does not echo it.
		r.debugRequestValue("replay: no recorded call", "call_site_id", id)
		writeError(w, http.StatusNotFound, "not_found_error", "no recorded call with that call-site id", nil)
		return
	}
	if more {
		out.NextPageToken = callToken(r.store.generation, p.last)
	}
	writeJSON(w, http.StatusOK, out)
}

// listDivergences: GET /v1/divergences with the session in the X-Replay-Session header (or
// ?session=) → that session's divergences: lenient and hybrid answers, and refused requests,
// the first maxDivergencesPerSession of them, and total, how many it had (those not kept
// included). A session sees only its own log.
func (r *replay) listDivergences(w http.ResponseWriter, req *http.Request) {
	id := req.Header.Get(headerSession)
	if id == "" {
		id = req.URL.Query().Get("session")
	}
	if id == "" {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "name the session: X-Replay-Session header or ?session=", nil)
		return
	}
	id = clientSession(id)
	divs, total := []Divergence{}, 0
	r.sessions.peek(id, func(ses *session) { divs, total = append(divs, ses.divs...), ses.divTotal })
	writeJSON(w, http.StatusOK, map[string]any{"divergences": divs, "total": total})
}
