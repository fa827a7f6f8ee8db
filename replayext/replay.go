package replayext

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/reprise-dev/reprise/callsite"
	"github.com/reprise-dev/reprise/normalize"
	"github.com/reprise-dev/reprise/replaycase"
	"github.com/reprise-dev/reprise/scrub"
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

func (r *replay) mode(req *http.Request) string {
	if m := req.Header.Get(headerMode); m == modeStrict || m == modeLenient {
		return m
	}
	return r.cfg.Mode
}

// scopedCase returns the case of a /v1/cases/{case_id}/… route ("" for the global route), or
// answers 404 itself.
func (r *replay) scopedCase(w http.ResponseWriter, req *http.Request) (string, bool) {
	id := req.PathValue("case_id")
	if id == "" {
		return "", true
	}
	if _, ok := r.store.get(id); !ok {
		writeError(w, http.StatusNotFound, "not_found_error", "no case "+strconv.Quote(id)+" in "+r.cfg.Directory, nil)
		return "", false
	}
	return id, true
}

// chatCompletions replays a Chat Completions call: the recorded response of the recorded call
// whose call-site id matches the request, as JSON or as Server-Sent Events.
func (r *replay) chatCompletions(w http.ResponseWriter, req *http.Request) {
	start := time.Now()
	caseID, ok := r.scopedCase(w, req)
	if !ok {
		return
	}
	var body map[string]any
	if err := json.NewDecoder(req.Body).Decode(&body); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "request body is not JSON: "+err.Error(), nil)
		return
	}
	r.scrubber.JSON(body, &scrub.Report{}) // the recordings were scrubbed with the same policy
	parsed := normalize.ParseOpenAIRequest(body)
	live := callsite.Request{Model: parsed.Model.RequestModel, Messages: parsed.Messages, Tools: parsed.Tools, Params: parsed.Model}
	session := sessionKey(req)

	var ref stepRef
	outcome := outcomeExact
	if id, refs := r.store.match(live, caseID); len(refs) > 0 {
		ref = refs[r.sessions.next(session+"|"+caseID+"|"+id, len(refs))]
	} else {
		nearest, diffs := r.nearestCall(live, caseID)
		if nearest == nil {
			r.record(req.Context(), endpointChat, outcomeMiss, start)
			writeError(w, http.StatusNotFound, "not_found_error", "no recorded model call to replay (the dataset has none in this scope)", nil)
			return
		}
		if r.mode(req) == modeStrict {
			r.record(req.Context(), endpointChat, outcomeMiss, start)
			st := nearest.st()
			writeError(w, http.StatusNotFound, "not_found_error", fmt.Sprintf(
				"strict replay: no recorded call matches this request. Nearest recorded call %s (case %s, step %d) differs at %s",
				st.CallSiteID, nearest.c.CaseID, st.Index, describe(diffs)),
				map[string]any{"nearest_call_site_id": st.CallSiteID, "nearest_case_id": nearest.c.CaseID, "differences": diffs})
			return
		}
		scope := caseID
		if scope == "" {
			scope = nearest.c.CaseID
		}
		steps := r.store.llmSteps(scope)
		pos := r.sessions.after(session + "|" + scope + "|" + endpointChat)
		if pos >= len(steps) {
			r.record(req.Context(), endpointChat, outcomeMiss, start)
			writeError(w, http.StatusNotFound, "not_found_error", fmt.Sprintf("lenient replay: every recorded model call of case %s was served in this session", scope), nil)
			return
		}
		ref, outcome = steps[pos], outcomeDivergent
		r.sessions.diverged(Divergence{Session: session, CaseID: scope, Endpoint: endpointChat, Served: ref.st().CallSiteID, Differences: diffs})
		w.Header().Set(headerDivergence, "true")
	}
	r.sessions.served(session+"|"+ref.c.CaseID+"|"+endpointChat, ref.pos)
	w.Header().Set("X-Replay-Case-Id", ref.c.CaseID)
	w.Header().Set("X-Replay-Call-Site-Id", ref.st().CallSiteID)
	r.record(req.Context(), endpointChat, outcome, start)
	if stream, _ := body["stream"].(bool); stream {
		includeUsage := false
		if opts, ok := body["stream_options"].(map[string]any); ok {
			includeUsage, _ = opts["include_usage"].(bool)
		}
		writeStream(w, ref.st(), includeUsage)
		return
	}
	writeJSON(w, http.StatusOK, completion(ref.st()))
}

// nearestCall is the recorded LLM step in scope whose request differs least from live.
func (r *replay) nearestCall(live callsite.Request, caseID string) (*stepRef, []Difference) {
	var best *stepRef
	var bestDiffs []Difference
	for _, ref := range r.store.llmSteps(caseID) {
		st := ref.st()
		diffs := diff("", callsite.FromStep(st).Canonical(st.CallSiteFields), live.Canonical(st.CallSiteFields), 20, nil)
		if best == nil || len(diffs) < len(bestDiffs) {
			ref := ref
			best, bestDiffs = &ref, diffs
		}
	}
	return best, bestDiffs
}

// openAIFinish maps a normalized finish reason back to the Chat Completions value.
func openAIFinish(f string) string {
	switch f {
	case "tool_call":
		return "tool_calls"
	case "":
		return "stop"
	}
	return f
}

type toolCallJSON struct {
	Index    *int   `json:"index,omitempty"`
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// choiceMessage renders a recorded output message as a Chat Completions message.
func choiceMessage(m replaycase.Message) (content *string, calls []toolCallJSON) {
	var text []string
	for _, p := range m.Parts {
		switch p.Type {
		case "tool_call":
			var tc toolCallJSON
			tc.ID, tc.Type = p.ID, "function"
			tc.Function.Name, tc.Function.Arguments = p.Name, p.Arguments
			calls = append(calls, tc)
		case "text":
			text = append(text, p.Content)
		}
	}
	if len(text) > 0 {
		s := strings.Join(text, "")
		content = &s
	}
	return content, calls
}

func responseID(st *replaycase.Step) string {
	if st.ResponseID != "" {
		return st.ResponseID
	}
	return "chatcmpl-" + strings.TrimPrefix(st.CallSiteID, "cs_")
}

func responseModel(st *replaycase.Step) string {
	if st.ModelConfig.ResponseModel != "" {
		return st.ModelConfig.ResponseModel
	}
	return st.ModelConfig.RequestModel
}

func usageJSON(u replaycase.Usage) map[string]any {
	return map[string]any{"prompt_tokens": u.InputTokens, "completion_tokens": u.OutputTokens, "total_tokens": u.TotalTokens}
}

// completion is the recorded response as a chat.completion object.
func completion(st *replaycase.Step) map[string]any {
	choices := []any{}
	for i, m := range st.OutputMessages {
		content, calls := choiceMessage(m)
		msg := map[string]any{"role": "assistant", "content": content}
		if len(calls) > 0 {
			msg["tool_calls"] = calls
		}
		choices = append(choices, map[string]any{"index": i, "message": msg, "finish_reason": openAIFinish(m.FinishReason), "logprobs": nil})
	}
	return map[string]any{
		"id": responseID(st), "object": "chat.completion", "created": st.StartTime.Unix(),
		"model": responseModel(st), "choices": choices, "usage": usageJSON(st.Usage),
	}
}

// writeStream sends the recorded response as Chat Completions Server-Sent Events: the role,
// the content, each tool call (id and name, then arguments), the finish reason, the usage
// chunk when asked for, and [DONE].
func writeStream(w http.ResponseWriter, st *replaycase.Step, includeUsage bool) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	send := func(choices []any, usage map[string]any) {
		chunk := map[string]any{"id": responseID(st), "object": "chat.completion.chunk", "created": st.StartTime.Unix(), "model": responseModel(st), "choices": choices}
		if usage != nil {
			chunk["usage"] = usage
		}
		b, _ := json.Marshal(chunk)
		_, _ = io.WriteString(w, "data: "+string(b)+"\n\n")
		if flusher != nil {
			flusher.Flush()
		}
	}
	delta := func(i int, d map[string]any, finish any) []any {
		return []any{map[string]any{"index": i, "delta": d, "finish_reason": finish, "logprobs": nil}}
	}
	for i, m := range st.OutputMessages {
		content, calls := choiceMessage(m)
		send(delta(i, map[string]any{"role": "assistant", "content": ""}, nil), nil)
		if content != nil {
			send(delta(i, map[string]any{"content": *content}, nil), nil)
		}
		for j, tc := range calls {
			j := j
			head := tc
			head.Index, head.Function.Arguments = &j, ""
			send(delta(i, map[string]any{"tool_calls": []toolCallJSON{head}}, nil), nil)
			var args toolCallJSON
			args.Index, args.Function.Arguments = &j, tc.Function.Arguments
			send(delta(i, map[string]any{"tool_calls": []toolCallJSON{args}}, nil), nil)
		}
		send(delta(i, map[string]any{}, openAIFinish(m.FinishReason)), nil)
	}
	if includeUsage {
		send([]any{}, usageJSON(st.Usage))
	}
	_, _ = io.WriteString(w, "data: [DONE]\n\n")
	if flusher != nil {
		flusher.Flush()
	}
}

// toolResult: POST /v1/cases/{case_id}/tools/{tool_name} with the arguments as body → the
// recorded result or error of that call.
func (r *replay) toolResult(w http.ResponseWriter, req *http.Request) {
	start := time.Now()
	caseID, ok := r.scopedCase(w, req)
	if !ok {
		return
	}
	c, _ := r.store.get(caseID)
	name := req.PathValue("tool_name")
	raw, err := io.ReadAll(req.Body)
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", err.Error(), nil)
		return
	}
	var calls []replaycase.ToolCall
	for _, tc := range c.ToolCalls {
		if tc.Name == name {
			calls = append(calls, tc)
		}
	}
	requested := map[string]any{"arguments": argumentsValue(r.scrubber.Text(string(raw), &scrub.Report{}))}
	i := r.lookup(w, req, recorded{
		endpoint: endpointTool, caseID: caseID, what: name + " call", cursor: "tool|" + name, n: len(calls),
		value: func(i int) any { return map[string]any{"arguments": argumentsValue(calls[i].Arguments)} },
		label: func(i int) string { return calls[i].ID },
	}, requested, start)
	if i >= 0 {
		writeJSON(w, http.StatusOK, calls[i])
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
	start := time.Now()
	caseID, ok := r.scopedCase(w, req)
	if !ok {
		return
	}
	c, _ := r.store.get(caseID)
	var q struct {
		Query      string `json:"query"`
		DataSource string `json:"data_source"`
	}
	if err := json.NewDecoder(req.Body).Decode(&q); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "body must be {\"query\": …, \"data_source\": …}: "+err.Error(), nil)
		return
	}
	shape := func(query, source string) any {
		if q.DataSource == "" { // the data source counts only when the request names one
			return map[string]any{"query": query}
		}
		return map[string]any{"query": query, "data_source": source}
	}
	refs := c.RetrievalRefs
	i := r.lookup(w, req, recorded{
		endpoint: endpointRetrieval, caseID: caseID, what: "retrieval", cursor: "retrieval", n: len(refs),
		value: func(i int) any { return shape(refs[i].Query, refs[i].DataSource) },
		label: func(i int) string { return refs[i].SpanID },
	}, shape(r.scrubber.Text(q.Query, &scrub.Report{}), q.DataSource), start)
	if i >= 0 {
		writeJSON(w, http.StatusOK, refs[i])
	}
}

// recorded describes the recorded items a tool or retrieval request is matched against.
type recorded struct {
	endpoint, caseID, what, cursor string
	n                              int
	value                          func(int) any    // item i, in the shape of the request
	label                          func(int) string // how error messages name item i
}

// lookup chooses which recorded item answers a request: an exact match (identical recordings
// in recorded order per session); else, in strict mode, a 404 naming the nearest item and the
// differences, or in lenient mode the next item after the last one served, recorded as a
// divergence. It writes the error itself and returns -1 when nothing is served.
func (r *replay) lookup(w http.ResponseWriter, req *http.Request, rec recorded, requested any, start time.Time) int {
	session := sessionKey(req)
	served := session + "|" + rec.caseID + "|" + rec.cursor
	var matches []int
	best, bestDiffs := -1, []Difference(nil)
	for i := 0; i < rec.n; i++ {
		d := diff("", rec.value(i), requested, 20, nil)
		if len(d) == 0 {
			matches = append(matches, i)
		} else if best < 0 || len(d) < len(bestDiffs) {
			best, bestDiffs = i, d
		}
	}
	pick, outcome := -1, outcomeExact
	switch {
	case len(matches) > 0:
		key, _ := json.Marshal(requested)
		pick = matches[r.sessions.next(served+"|"+string(key), len(matches))]
	case best >= 0 && r.mode(req) == modeStrict:
		r.record(req.Context(), rec.endpoint, outcomeMiss, start)
		writeError(w, http.StatusNotFound, "not_found_error", fmt.Sprintf("strict replay: no recorded %s matches. Nearest recorded %s %s differs at %s", rec.what, rec.what, rec.label(best), describe(bestDiffs)),
			map[string]any{"nearest": rec.label(best), "differences": bestDiffs})
		return -1
	case best >= 0:
		if pos := r.sessions.after(served); pos < rec.n {
			pick, outcome = pos, outcomeDivergent
			r.sessions.diverged(Divergence{Session: session, CaseID: rec.caseID, Endpoint: rec.endpoint, Served: rec.label(pos), Differences: bestDiffs})
			w.Header().Set(headerDivergence, "true")
		}
	}
	if pick < 0 {
		r.record(req.Context(), rec.endpoint, outcomeMiss, start)
		writeError(w, http.StatusNotFound, "not_found_error", fmt.Sprintf("case %s recorded no (more) %s to serve", rec.caseID, rec.what), nil)
		return -1
	}
	r.sessions.served(served, pick)
	r.record(req.Context(), rec.endpoint, outcome, start)
	return pick
}
