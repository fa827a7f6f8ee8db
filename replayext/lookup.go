package replayext

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/reprise-dev/reprise/casediff"
)

const (
	endpointChat      = "chat"
	endpointTool      = "tool"
	endpointRetrieval = "retrieval"

	outcomeExact     = "exact"
	outcomeDivergent = "divergent"
	outcomeMiss      = "miss"
	outcomeLive      = "live"

	headerMode       = "X-Replay-Mode"
	headerDivergence = "X-Replay-Divergence"
)

// hit is one recorded item: its case and its position among the case's items of a stream.
type hit struct {
	caseID string
	pos    int
}

// items name what a request can be answered from. They are apart from interactions because a
// session keeps these strings: Go's escape analysis does not tell a struct's fields apart, and
// would move every callback of interactions to the heap with them, on every request.
type items struct {
	endpoint string // telemetry name: chat, tool, retrieval, embeddings
	stream   string // which recorded items of a case: chat, tool:NAME, retrieval
	scope    string // the case the request named; "" when it named none
	what     string // how messages name one item: "model call", "get_weather call"
}

// interactions describe how a request is matched against its items: the one description
// every replay endpoint hands to lookup.
type interactions struct {
	// match is the matcher: the request's key and the recorded items equal to it, in
	// recorded order; with follow set, any one of them.
	match func() (key string, hits []hit)
	// follow, set for a request that names no case, is which of the recordings of key answer
	// it (store.followed), and how many there are in all.
	follow func(key, cur string, made int) (hits []hit, all int)
	// count is how many items the case recorded on this stream.
	count func(caseID string) int
	// compare lists where the request differs from item h.
	compare func(h hit) ([]Difference, error)
	// label names item h in the divergence log.
	label func(h hit) string
	// classify gives the finding type of each differing path.
	classify func(h hit, diffs []Difference) []Finding
	// added is the finding type of a request made more often than the case recorded it
	// (model_call_added, tool_call_added, retrieval_drift).
	added casediff.FindingType
	// api is the API whose upstream answers the request live (hybrid mode), with body, the
	// request's body; "" for endpoints that have no upstream (tools and retrievals are the
	// agent's own).
	api  string
	body []byte
}

// mode is the request's X-Replay-Mode, else the configured mode. A header naming no mode is
// an error, not the configured mode: a misspelt "lenient" must not replay strictly unnoticed.
func (r *replay) mode(req *http.Request) (Mode, error) {
	v := req.Header.Get(headerMode)
	if v == "" {
		return r.cfg.Mode, nil
	}
	var m Mode
	if m.UnmarshalText([]byte(v)) != nil {
		// Without the value: an error body never echoes the request (a header may be 1 MB).
		return 0, fmt.Errorf("%s must be %q, %q or %q", headerMode, ModeStrict, ModeLenient, ModeHybrid)
	}
	return m, nil
}

// lookup chooses the recorded item that answers a request. Identical recordings of an exact
// match are served in recorded order per session, each once: past them the request is a
// divergence (repeated). A request that names no case is answered from the recordings of the
// case the session follows (followed). Otherwise the candidate is the item after
// the one the session was served last in the case (the first case when the session has none),
// chosen by position so that nothing about the answer depends on the request's values; strict
// mode refuses with the paths where the request differs from it, lenient mode serves it and
// logs a divergence; hybrid mode forwards it live, and every later request of the session
// that has an upstream too. lookup writes every refusal and live answer itself; ok is false
// then.
func (r *replay) lookup(w http.ResponseWriter, req *http.Request, it items, in interactions) (served hit, ok bool) {
	start := time.Now()
	id, fresh := r.sessionOf(req)
	if fresh {
		w.Header().Set(headerSession, id)
	}
	mode, err := r.mode(req)
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", err.Error(), nil)
		return hit{}, false
	}
	hybrid := mode == ModeHybrid && in.api != ""
	key, hits := in.match()
	var candidate hit
	found, live, liveFrom, repeat := false, false, "", false
	r.sessions.with(id, func(ses *session) {
		if hybrid && ses.live {
			live, liveFrom = true, ses.liveFrom
			return
		}
		k := cursorKey{it.scope, it.stream, key}
		all := len(hits)
		if len(hits) > 0 && in.follow != nil {
			hits, all = in.follow(key, ses.lastCase.value(it.stream), ses.served.value(k))
		}
		if len(hits) > 0 {
			i, fresh := ses.next(k, len(hits), all)
			served, ok, repeat = hits[i], fresh, !fresh
			if fresh || mode == ModeLenient { // what is served moves the cursors
				ses.last.set(cursorKey{served.caseID, it.stream, ""}, served.pos)
				ses.lastCase.set(it.stream, served.caseID)
			}
			return
		}
		caseID := it.scope
		if caseID == "" {
			caseID = ses.lastCase.value(it.stream)
		}
		if caseID == "" {
			caseID = r.store.firstCase()
		}
		candidate = hit{caseID, ses.after(cursorKey{caseID, it.stream, ""})}
		found = caseID != "" && candidate.pos < in.count(caseID)
		if found && mode == ModeLenient {
			// Lenient serves the candidate whatever the comparison finds: take it now, under
			// the same lock, so that concurrent requests of the session get the next ones.
			ses.last.set(cursorKey{candidate.caseID, it.stream, ""}, candidate.pos)
			ses.lastCase.set(it.stream, candidate.caseID)
		}
	})
	if live {
		r.record(req.Context(), it.endpoint, outcomeLive, start)
		r.forward(w, req, in.api, in.body, liveFrom)
		return hit{}, false
	}
	if ok {
		r.record(req.Context(), it.endpoint, outcomeExact, start)
		return served, true
	}
	if repeat {
		return r.repeated(w, req, id, it, in, served, mode, hybrid, start)
	}
	if !found && hybrid {
		r.goLive(w, req, id, it.endpoint, in, Divergence{CaseID: candidate.caseID, Endpoint: it.endpoint, Live: true,
			Findings: []Finding{{Type: casediff.ModelCallAdded}}, Time: time.Now().UTC()}, start)
		return hit{}, false
	}
	if !found {
		r.refuse(id, Divergence{CaseID: candidate.caseID, Endpoint: it.endpoint, Findings: []Finding{{Type: in.added}}, Time: time.Now().UTC()})
		r.record(req.Context(), it.endpoint, outcomeMiss, start)
		msg := fmt.Sprintf("no recorded %s matches this request", it.what)
		if candidate.caseID != "" {
			msg += fmt.Sprintf(", and case %s has no further recorded %s to compare it with", candidate.caseID, it.what)
		}
		writeError(w, http.StatusNotFound, "not_found_error", msg, nil)
		return hit{}, false
	}
	diffs, err := in.compare(candidate)
	if err != nil {
		r.caseError(w, err)
		return hit{}, false
	}
	d := Divergence{CaseID: candidate.caseID, Endpoint: it.endpoint, Paths: paths(diffs), Findings: in.classify(candidate, diffs), Time: time.Now().UTC()}
	if r.cfg.LocalDebug {
		d.Differences = diffs
	}
	strict := fmt.Sprintf("strict replay: no recorded %s matches this request; it differs from the next recorded %s of case %s at: %s",
		it.what, it.what, candidate.caseID, strings.Join(d.Paths, ", "))
	return r.diverge(w, req, id, it, in, d, candidate, mode, hybrid, start, strict, missDetail(d))
}

// repeated answers a request that equals recordings the session was served every one of:
// the run makes the call more often than the recording did. That is a divergence like any
// other, never a silent repeat: strict refuses it, lenient serves the last of those
// recordings again and logs it, hybrid goes live. Its finding is in.added, without a path.
func (r *replay) repeated(w http.ResponseWriter, req *http.Request, id string, it items, in interactions, last hit, mode Mode, hybrid bool, start time.Time) (hit, bool) {
	d := Divergence{CaseID: last.caseID, Endpoint: it.endpoint, Findings: []Finding{{Type: in.added}}, Time: time.Now().UTC()}
	strict := fmt.Sprintf("strict replay: this session was already served every recording of this %s (case %s): the run makes it more often than the recording did",
		it.what, last.caseID)
	return r.diverge(w, req, id, it, in, d, last, mode, hybrid, start, strict, map[string]any{"paths": []string{}, "findings": d.Findings})
}

// diverge answers a request that diverges from the recording as d says, by the mode: hybrid
// goes live, lenient serves candidate and logs d in the session, strict (or hybrid on an
// endpoint without upstream) refuses with a 404 saying strict and detail, and logs d as
// refused.
func (r *replay) diverge(w http.ResponseWriter, req *http.Request, id string, it items, in interactions, d Divergence, candidate hit, mode Mode, hybrid bool, start time.Time, strict string, detail map[string]any) (hit, bool) {
	switch {
	case hybrid:
		d.Live = true
		r.goLive(w, req, id, it.endpoint, in, d, start)
		return hit{}, false
	case mode == ModeLenient:
		d.Served = in.label(candidate)
		r.sessions.with(id, func(ses *session) { ses.diverged(d) })
		w.Header().Set(headerDivergence, "true")
		r.record(req.Context(), it.endpoint, outcomeDivergent, start)
		return candidate, true
	default:
		r.refuse(id, d)
		r.record(req.Context(), it.endpoint, outcomeMiss, start)
		writeError(w, http.StatusNotFound, "not_found_error", strict, detail)
		return hit{}, false
	}
}

// goLive switches a session to live answers at its first miss: the divergence is logged and
// the request, like every later one of the session, is answered by the upstream. Without an
// upstream for the request's API the miss is refused (and logged as refused) and the session
// is left as it was: live, it would refuse every later request, recorded ones included.
func (r *replay) goLive(w http.ResponseWriter, req *http.Request, id, endpoint string, in interactions, d Divergence, start time.Time) {
	if _, ok := r.upstreamOf(w, in.api); !ok {
		r.refuse(id, d)
		r.record(req.Context(), endpoint, outcomeMiss, start)
		return
	}
	r.sessions.with(id, func(ses *session) {
		ses.live, ses.liveFrom = true, d.CaseID
		ses.diverged(d)
	})
	r.record(req.Context(), endpoint, outcomeLive, start)
	r.forward(w, req, in.api, in.body, d.CaseID)
}

// missDetail is what a strict miss tells the client: the differing paths, and the values only
// with local_debug.
func missDetail(d Divergence) map[string]any {
	detail := map[string]any{"paths": d.Paths}
	if d.Differences != nil {
		detail["differences"] = d.Differences
	}
	return detail
}
