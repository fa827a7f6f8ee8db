package replayext

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"go.uber.org/zap"

	"github.com/reprise-dev/reprise/callsite"
	"github.com/reprise-dev/reprise/casediff"
	"github.com/reprise-dev/reprise/replaycase"
	"github.com/reprise-dev/reprise/scrub"
	"github.com/reprise-dev/reprise/wireapi"
)

// scopedCase returns the case of a /v1/cases/{case_id}/… route ("" for a route without one),
// or answers 404 itself. The id is returned as the index spells it (lower-case hex), whatever
// case the client's hex digits were in: session cursors, hits and answers name a case by
// that one spelling.
func (r *replay) scopedCase(w http.ResponseWriter, req *http.Request) (string, bool) {
	id := req.PathValue("case_id")
	if id == "" {
		return "", true
	}
	key, ok := parseHexKey(id)
	if !ok || !r.store.has(id) {
		r.caseError(w, noCase(id))
		return "", false
	}
	return key.String(), true
}

// sessionCase is the case the request's replay session was served a model call from last, ""
// before any: the case of a request on an unscoped base URL (/openai/v1/…) that refers to what
// an earlier answer of the session returned.
func (r *replay) sessionCase(req *http.Request) (caseID string) {
	id, _ := r.sessionOf(req)
	r.sessions.peek(id, func(ses *session) { caseID = ses.lastCase.value(endpointChat) })
	return caseID
}

// caseError answers a read of a recorded case that failed: 404 when the index no longer holds
// the case (retention removed it after the request found it), 504 when the dataset did not
// answer in time (an object store), 500 otherwise. The log names the file, the answer does not.
func (r *replay) caseError(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, errNoCase):
		// The id came with the request: the log may name it, the answer does not echo it.
		r.debugRequestValue("replay: no such case", "error", err.Error())
		msg := msgNoCase
		if errors.Is(err, errNotACaseID) {
			msg += msgNotACaseID
		}
		writeError(w, http.StatusNotFound, "not_found_error", msg, nil)
	case errors.Is(err, context.DeadlineExceeded):
		r.set.Logger.Warn("replay could not read a recorded case in time", zap.Error(err))
		writeError(w, http.StatusGatewayTimeout, "server_error", "the recorded case could not be read in time; see the collector log", nil)
	case errors.Is(err, context.Canceled): // the client went away, or the extension is stopping
		r.set.Logger.Debug("replay stopped reading a recorded case", zap.Error(err))
		writeError(w, http.StatusServiceUnavailable, "server_error", "the read of the recorded case was canceled", nil)
	default:
		r.set.Logger.Error("replay could not read a recorded case", zap.Error(err))
		writeError(w, http.StatusInternalServerError, "server_error", "the recorded case could not be read; see the collector log", nil)
	}
}

// msgNoCase answers a request for a case the index does not hold (see caseError).
const msgNoCase = "no recorded case with that id"

// msgNotACaseID follows msgNoCase for an id that is not 32 hex digits (errNotACaseID).
const msgNotACaseID = ": a case id is 32 hex digits, and a URL needs the whole id (reprise's commands also take a prefix)"

// debugRequestValue logs msg at debug level naming, under key, a value taken from a request:
// scrubbed, as the request's body is before it is matched (a key pasted where an id belongs
// stays out of the collector's log, which holds only scrubbed telemetry), and clipped. Only
// when debug is on: scrubbing a value costs more than the 404 or 401 that logs it.
func (r *replay) debugRequestValue(msg, key, value string, fields ...zap.Field) {
	if ce := r.set.Logger.Check(zap.DebugLevel, msg); ce != nil {
		ce.Write(append(fields, zap.String(key, clip(r.scrubber.Text(value, &scrub.Report{}))))...)
	}
}

// clip bounds a value taken from a request before it is logged: a URL may be a megabyte.
func clip(s string) string {
	const most = 256
	if len(s) <= most {
		return s
	}
	return s[:most] + "…"
}

// readBody reads a request body within the server's max_request_body_size, or answers itself.
// The body is in a pooled buffer that release returns: a body is used within its request only
// (memos keep copies), so its buffer serves a later request instead of becoming garbage.
func readBody(w http.ResponseWriter, req *http.Request) (body []byte, release func(), ok bool) {
	buf := bodyBuffers.Get().(*bytes.Buffer)
	buf.Reset()
	buf.Grow(int(min(max(req.ContentLength, 0), maxBodyHint))) // the client's word, within reason
	_, err := buf.ReadFrom(req.Body)
	release = func() {
		if buf.Cap() <= maxPooledBody {
			bodyBuffers.Put(buf)
		}
	}
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		release()
		writeError(w, http.StatusRequestEntityTooLarge, "invalid_request_error", "request body larger than "+strconv.FormatInt(tooLarge.Limit, 10)+" bytes", nil)
		return nil, nil, false
	case err != nil:
		release()
		writeError(w, http.StatusBadRequest, "invalid_request_error", "could not read the request body", nil)
		return nil, nil, false
	}
	return buf.Bytes(), release, true
}

var bodyBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

const (
	// maxBodyHint is the most readBody allocates up front on a request's word.
	maxBodyHint = 1 << 20
	// maxPooledBody is the largest buffer kept for reuse.
	maxPooledBody = 256 << 10
)

// begin reads what every replay route needs: the case the route names ("" for none) and the
// body, whose buffer the caller releases once done with it. It answers errors itself; ok is
// false then.
func (r *replay) begin(w http.ResponseWriter, req *http.Request) (caseID string, body []byte, release func(), ok bool) {
	if caseID, ok = r.scopedCase(w, req); ok {
		body, release, ok = readBody(w, req)
	}
	return caseID, body, release, ok
}

// recordedCase reads a case for req, or answers the error itself (caseError).
func (r *replay) recordedCase(w http.ResponseWriter, req *http.Request, caseID string) (*replaycase.Case, bool) {
	c, err := r.store.get(req.Context(), caseID)
	if err != nil {
		r.caseError(w, err)
		return nil, false
	}
	return c, true
}

// chatCompletions replays a Chat Completions call: the recorded response of the recorded call
// whose call-site id matches the request, as JSON or as Server-Sent Events.
func (r *replay) chatCompletions(w http.ResponseWriter, req *http.Request) {
	caseID, raw, release, ok := r.begin(w, req)
	if !ok {
		return
	}
	defer release()
	in, ok := decodeModelRequest(r, w, r.chatRequests, raw, wireapi.ParseChatRequest, chatCallSite, nil)
	if !ok {
		return
	}
	r.modelCall(w, req, apiOpenAI, raw, caseID, in.requested, in.ids, func(w http.ResponseWriter, h hit, st *replaycase.Step) {
		if in.parsed.Stream {
			wireapi.WriteChatResponse(w, in.parsed, st)
			return
		}
		r.writeAnswer(w, answerKey{step: h, api: "chat"}, st, wireapi.ChatResponseJSON)
	})
}

// writeAnswer answers 200 with the JSON answer render gives for a recorded step, remembered
// under key.
func (r *replay) writeAnswer(w http.ResponseWriter, key answerKey, st *replaycase.Step, render func(*replaycase.Step) []byte) {
	body, ok := r.answers.get(key)
	if !ok {
		body = render(st)
		r.answers.put(key, body, len(body))
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// modelCall answers a model request of any API: the recorded step whose call-site id matches
// (ids remembers the request's ids when not nil), rendered by write, or what the mode says for a miss (a 404, the next recorded step, or the
// upstream).
func (r *replay) modelCall(w http.ResponseWriter, req *http.Request, api string, raw []byte, caseID string, requested callsite.Request, ids *callSiteIDs, write func(http.ResponseWriter, hit, *replaycase.Step)) {
	var recordedForm, requestedForm map[string]any // of the compared call, for classify
	var key string                                 // the request's call-site id, its cursor's key
	var follow func(key, cur string, made int) ([]hit, int)
	if caseID == "" {
		follow = r.store.followed
	}
	h, ok := r.lookup(w, req, items{endpoint: endpointChat, stream: endpointChat, scope: caseID, what: "model call"}, interactions{
		match: func() (string, []hit) {
			var hits []hit
			if caseID == "" {
				// The case the session follows first: another case may have recorded the same
				// request over other fields, and the id of the first field set that has a
				// recording may name that case's recording alone (followed would serve it).
				if cur := r.sessionCase(req); cur != "" {
					if key, hits = r.store.match(requested, cur, ids); len(hits) > 0 {
						return key, hits
					}
				}
			}
			key, hits = r.store.match(requested, caseID, ids)
			return key, hits
		},
		follow: follow,
		count:  r.store.llmCount,
		compare: func(h hit) ([]Difference, error) {
			st, err := r.store.llmStep(req.Context(), h)
			if err != nil {
				return nil, err
			}
			recordedForm, requestedForm = callsite.FromStep(st).Canonical(st.CallSiteFields), requested.Canonical(st.CallSiteFields)
			return diffRequest(recordedForm, requestedForm), nil
		},
		label: r.store.callSiteID,
		classify: func(_ hit, diffs []Difference) []Finding {
			return classifyModelCall(recordedForm, requestedForm, diffs)
		},
		added: casediff.ModelCallAdded,
		api:   api,
		body:  raw,
	})
	if !ok {
		return
	}
	st, err := r.store.llmStep(req.Context(), h)
	if err != nil {
		r.unserve(w, req, cursorKey{caseID, endpointChat, key})
		r.caseError(w, err)
		return
	}
	w.Header().Set("X-Replay-Case-Id", h.caseID)
	w.Header().Set("X-Replay-Call-Site-Id", st.CallSiteID)
	sw := &sendWriter{ResponseWriter: w}
	write(sw, h, st)
	if sw.err != nil {
		r.unserve(w, req, cursorKey{caseID, endpointChat, key})
	}
}

// unserve gives back the exact answer lookup chose for req under cursor k when it could not be
// sent (its case could not be read: a 504 from a slow object store, which SDKs retry; or the
// client went away while its stream was written): the retry gets that recording again, not
// the next identical one or a repeat. A lenient answer (marked divergent) is not given back.
func (r *replay) unserve(w http.ResponseWriter, req *http.Request, k cursorKey) {
	if w.Header().Get(headerDivergence) != "" {
		return
	}
	id := w.Header().Get(headerSession) // a session the server chose for this request
	if id == "" {
		id, _ = r.sessionOf(req)
	}
	r.sessions.peek(id, func(ses *session) {
		if i := ses.served.value(k); i > 0 {
			ses.served.set(k, i-1)
		}
	})
}

// sendWriter remembers the first write of an answer that failed: the client went away before
// it had the whole answer. A stream flushes each event, so a stream cut off is seen; a JSON
// answer is written at once, when the handler returns, and its failure is not.
type sendWriter struct {
	http.ResponseWriter
	err error
}

func (s *sendWriter) Write(b []byte) (int, error) {
	n, err := s.ResponseWriter.Write(b)
	if s.err == nil {
		s.err = err
	}
	return n, err
}

func (s *sendWriter) Flush() {
	if err := http.NewResponseController(s.ResponseWriter).Flush(); s.err == nil {
		s.err = err
	}
}

func (s *sendWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// chatCallSite is the call-site form of a Chat Completions request, with version 1's reading
// when it differs (legacy function calling), so that ids recorded before version 2 still match.
func chatCallSite(p *wireapi.ChatRequest) callsite.Request {
	req := callsite.Request{Model: p.Params.RequestModel, Messages: p.Messages, Tools: p.Tools, Params: p.Params}
	if v1 := p.Version1; v1 != nil {
		req.Version1 = &callsite.Request{Model: v1.Params.RequestModel, Messages: v1.Messages, Tools: v1.Tools, Params: v1.Params}
	}
	return req
}

// scrubRequest applies the secrets policy to every string of a model request, and of its
// version-1 reading, which shares some strings with it (parts, tools): each is scrubbed once.
func scrubRequest(s *scrub.Scrubber, r *callsite.Request) {
	rep := &scrub.Report{}
	var seen map[*string]bool
	if r.Version1 != nil {
		seen = map[*string]bool{}
	}
	text := func(v *string) {
		if seen != nil {
			if seen[v] {
				return
			}
			seen[v] = true
		}
		*v = s.Text(*v, rep)
	}
	scrubStrings(r, text)
	if r.Version1 != nil {
		scrubStrings(r.Version1, text)
	}
}

// scrubStrings calls text on every string of r that the call-site form reads.
func scrubStrings(r *callsite.Request, text func(*string)) {
	text(&r.Model)
	text(&r.Params.RequestModel)
	text(&r.Params.ToolChoice)
	text(&r.Params.ResponseFormat) // its schema's descriptions and enums are text the recording had scrubbed
	for i := range r.Params.Stop {
		text(&r.Params.Stop[i])
	}
	for i := range r.Tools {
		text(&r.Tools[i].Name)
	}
	for i := range r.Messages {
		m := &r.Messages[i]
		text(&m.Name)
		for j := range m.Parts {
			p := &m.Parts[j]
			for _, f := range []*string{&p.ID, &p.Name, &p.Content, &p.Arguments, &p.Response, &p.URI, &p.FileID} {
				text(f)
			}
		}
	}
}

// toolResult: POST /v1/cases/{case_id}/tools/{tool_name} with the arguments as body → the
// recorded result or error of that call.
func (r *replay) toolResult(w http.ResponseWriter, req *http.Request) {
	caseID, raw, release, ok := r.begin(w, req)
	if !ok {
		return
	}
	defer release()
	c, ok := r.recordedCase(w, req, caseID)
	if !ok {
		return
	}
	name := req.PathValue("tool_name")
	var calls []replaycase.ToolCall
	for _, tc := range c.ToolCalls {
		if tc.Name == name {
			calls = append(calls, tc)
		}
	}
	requested := map[string]any{"arguments": argumentsValue(r.scrubber.Text(string(raw), &scrub.Report{}))}
	recorded := func(h hit) any { return map[string]any{"arguments": argumentsValue(calls[h.pos].Arguments)} }
	it, in := r.itemsOf(caseID, endpointTool, "tool:"+name, name+" call", len(calls), requested, recorded, func(h hit) string { return calls[h.pos].ID }, casediff.ToolArgsChanged, casediff.ToolCallAdded)
	h, ok := r.lookup(w, req, it, in)
	if ok {
		writeJSON(w, http.StatusOK, calls[h.pos])
	}
}

// argumentsValue is tool arguments as a JSON value (text that is not JSON stays a string).
func argumentsValue(s string) any {
	var v any
	if json.Unmarshal([]byte(s), &v) == nil {
		return v
	}
	return strings.TrimSpace(s)
}

// retrieval: POST /v1/cases/{case_id}/retrieval {query, data_source} → the recorded documents.
func (r *replay) retrieval(w http.ResponseWriter, req *http.Request) {
	caseID, raw, release, ok := r.begin(w, req)
	if !ok {
		return
	}
	defer release()
	var q struct {
		Query      *string `json:"query"`
		DataSource string  `json:"data_source"`
	}
	if err := json.Unmarshal(raw, &q); err != nil || q.Query == nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", `body must be {"query": string, "data_source": string (optional)}`, nil)
		return
	}
	shape := func(query, source string) any {
		if q.DataSource == "" { // the data source counts only when the request names one
			return map[string]any{"query": query}
		}
		return map[string]any{"query": query, "data_source": source}
	}
	c, ok := r.recordedCase(w, req, caseID)
	if !ok {
		return
	}
	refs := c.RetrievalRefs
	// Both are client text that the processor recorded scrubbed (a source may be a URL with a key).
	requested := shape(r.scrubber.Text(*q.Query, &scrub.Report{}), r.scrubber.Text(q.DataSource, &scrub.Report{}))
	recorded := func(h hit) any { return shape(refs[h.pos].Query, refs[h.pos].DataSource) }
	it, in := r.itemsOf(caseID, endpointRetrieval, endpointRetrieval, "retrieval", len(refs), requested, recorded, func(h hit) string { return refs[h.pos].SpanID }, casediff.RetrievalDrift, casediff.RetrievalDrift)
	h, ok := r.lookup(w, req, it, in)
	if ok {
		writeJSON(w, http.StatusOK, refs[h.pos])
	}
}

// itemsOf describes a case's recorded tool calls or retrievals for lookup: the matcher is
// equality of the request with the recorded item in the same JSON shape.
// finding is the type of a differing path; added, that of a request made more often than
// the case recorded it.
func (r *replay) itemsOf(caseID, endpoint, stream, what string, n int, requested any, recorded func(hit) any, label func(hit) string, finding, added casediff.FindingType) (items, interactions) {
	return items{endpoint: endpoint, stream: stream, scope: caseID, what: what}, interactions{
		match: func() (string, []hit) {
			var hits []hit
			for i := 0; i < n; i++ {
				if equalJSON(recorded(hit{caseID, i}), requested) {
					hits = append(hits, hit{caseID, i})
				}
			}
			key, _ := json.Marshal(requested)
			return string(key), hits
		},
		count:    func(string) int { return n },
		compare:  func(h hit) ([]Difference, error) { return diff("", recorded(h), requested, nil), nil },
		label:    label,
		classify: classifyAs(finding),
		added:    added,
	}
}
