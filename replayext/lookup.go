package replayext

import (
	"fmt"
	"net/http"
	"strings"
	"time"
)

const (
	endpointChat      = "chat"
	endpointTool      = "tool"
	endpointRetrieval = "retrieval"

	outcomeExact     = "exact"
	outcomeDivergent = "divergent"
	outcomeMiss      = "miss"

	headerMode       = "X-Replay-Mode"
	headerDivergence = "X-Replay-Divergence"
)

// hit is one recorded item: its case and its position among the case's items of a stream.
type hit struct {
	caseID string
	pos    int
}

// interactions describe what a request can be answered from and how it is matched: the one
// description every replay endpoint hands to lookup.
type interactions struct {
	endpoint string // telemetry name: chat, tool, retrieval
	stream   string // which recorded items of a case: chat, tool:NAME, retrieval
	scope    string // the case the request named; "" when it named none
	what     string // how messages name one item: "model call", "get_weather call"
	// match is the matcher: the request's key and the recorded items equal to it, in
	// recorded order.
	match func() (key string, hits []hit)
	// count is how many items the case recorded on this stream.
	count func(caseID string) int
	// compare lists where the request differs from item h.
	compare func(h hit) ([]Difference, error)
	// label names item h in the divergence log.
	label func(h hit) string
}

// mode is the request's X-Replay-Mode, else the configured mode.
func (r *replay) mode(req *http.Request) Mode {
	var m Mode
	if v := req.Header.Get(headerMode); v != "" && m.UnmarshalText([]byte(v)) == nil {
		return m
	}
	return r.cfg.Mode
}

// lookup chooses the recorded item that answers a request. Identical recordings of an exact
// match are served in recorded order per session. Otherwise the candidate is the item after
// the one the session was served last in the case (the first case when the session has none),
// chosen by position so that nothing about the answer depends on the request's values; strict
// mode refuses with the paths where the request differs from it, lenient mode serves it and
// logs a divergence. lookup writes every refusal itself; ok is false then.
func (r *replay) lookup(w http.ResponseWriter, req *http.Request, in interactions) (served hit, ok bool) {
	start := time.Now()
	id, fresh := sessionOf(req)
	if fresh {
		w.Header().Set(headerSession, id)
	}
	key, hits := in.match()
	var candidate hit
	found := false
	r.sessions.with(id, func(ses *session) {
		if len(hits) > 0 {
			served, ok = hits[ses.next(cursorKey{in.scope, in.stream, key}, len(hits))], true
			ses.last[cursorKey{served.caseID, in.stream, ""}] = served.pos
			ses.lastCase[in.stream] = served.caseID
			return
		}
		caseID := in.scope
		if caseID == "" {
			caseID = ses.lastCase[in.stream]
		}
		if caseID == "" {
			caseID = r.store.firstCase()
		}
		candidate = hit{caseID, ses.after(cursorKey{caseID, in.stream, ""})}
		found = caseID != "" && candidate.pos < in.count(caseID)
	})
	if ok {
		r.record(req.Context(), in.endpoint, outcomeExact, start)
		return served, true
	}
	if !found {
		r.record(req.Context(), in.endpoint, outcomeMiss, start)
		msg := fmt.Sprintf("no recorded %s matches this request", in.what)
		if candidate.caseID != "" {
			msg += fmt.Sprintf(", and case %s has no further recorded %s to compare it with", candidate.caseID, in.what)
		}
		writeError(w, http.StatusNotFound, "not_found_error", msg, nil)
		return hit{}, false
	}
	diffs, err := in.compare(candidate)
	if err != nil {
		r.unreadable(w, err)
		return hit{}, false
	}
	detail := map[string]any{"paths": paths(diffs)}
	if r.cfg.LocalDebug {
		detail["differences"] = diffs
	}
	switch r.mode(req) {
	case ModeLenient:
		d := Divergence{CaseID: candidate.caseID, Endpoint: in.endpoint, Served: in.label(candidate), Paths: paths(diffs), Time: time.Now().UTC()}
		if r.cfg.LocalDebug {
			d.Differences = diffs
		}
		r.sessions.with(id, func(ses *session) {
			ses.last[cursorKey{candidate.caseID, in.stream, ""}] = candidate.pos
			ses.lastCase[in.stream] = candidate.caseID
			ses.diverged(d)
		})
		w.Header().Set(headerDivergence, "true")
		r.record(req.Context(), in.endpoint, outcomeDivergent, start)
		return candidate, true
	default: // ModeStrict
		r.record(req.Context(), in.endpoint, outcomeMiss, start)
		writeError(w, http.StatusNotFound, "not_found_error", fmt.Sprintf(
			"strict replay: no recorded %s matches this request; it differs from the next recorded %s of case %s at: %s",
			in.what, in.what, candidate.caseID, strings.Join(paths(diffs), ", ")), detail)
		return hit{}, false
	}
}
