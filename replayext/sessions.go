package replayext

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"sort"
	"strings"
	"sync"
	"time"
)

// sessions keeps the replay cursors. A replay session is the incoming trace (the trace id of
// the traceparent header, as an instrumented agent sends it) or an explicit X-Replay-Session
// header. Within a session, identical requests recorded several times are served in recorded
// order, and lenient mode serves "the next recorded call" after the last one served.
type sessions struct {
	mu      sync.Mutex
	cursors map[string]int // session|scope|key → occurrences served
	last    map[string]int // session|case|endpoint → position of the last recorded item served
	divs    []Divergence
}

// maxDivergences bounds the divergence log; the oldest are dropped first. maxCursors bounds
// the cursor maps: past it they start afresh (replays in progress then restart from the first
// recording), which keeps a long-running collector's memory flat.
const (
	maxDivergences = 10_000
	maxCursors     = 100_000
)

// Divergence is a lenient answer that was not an exact match.
type Divergence struct {
	Session     string       `json:"session"`
	CaseID      string       `json:"case_id"`
	Endpoint    string       `json:"endpoint"`
	Served      string       `json:"served"`
	Differences []Difference `json:"differences"`
	Time        time.Time    `json:"time"`
}

// Difference is one field where a request differs from a recording.
type Difference struct {
	Path      string `json:"path"`
	Recorded  any    `json:"recorded"`
	Requested any    `json:"requested"`
}

func newSessions() *sessions {
	return &sessions{cursors: map[string]int{}, last: map[string]int{}}
}

// sessionKey names the replay session of a request.
func sessionKey(req *http.Request) string {
	if s := req.Header.Get("X-Replay-Session"); s != "" {
		return s
	}
	if tp := strings.Split(req.Header.Get("traceparent"), "-"); len(tp) == 4 {
		return tp[1]
	}
	return "default"
}

// next returns which of n identical recordings to serve for key, in recorded order; past the
// last one it keeps serving the last.
func (s *sessions) next(key string, n int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.cursors) >= maxCursors {
		s.cursors = map[string]int{}
	}
	i := s.cursors[key]
	s.cursors[key] = i + 1
	return min(i, n-1)
}

// served remembers the position of the item served last for session, case and endpoint.
func (s *sessions) served(key string, pos int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.last) >= maxCursors {
		s.last = map[string]int{}
	}
	s.last[key] = pos
}

// after returns the position after the last one served (0 when none was).
func (s *sessions) after(key string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if pos, ok := s.last[key]; ok {
		return pos + 1
	}
	return 0
}

func (s *sessions) diverged(d Divergence) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d.Time = time.Now().UTC()
	s.divs = append(s.divs, d)
	if len(s.divs) > maxDivergences {
		s.divs = s.divs[len(s.divs)-maxDivergences:]
	}
}

func (s *sessions) divergences(session string) []Divergence {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []Divergence{}
	for _, d := range s.divs {
		if session == "" || d.Session == session {
			out = append(out, d)
		}
	}
	return out
}

// diff lists where two JSON values differ, as paths like messages[1].content[0].text; at
// most limit differences.
func diff(path string, recorded, requested any, limit int, out []Difference) []Difference {
	if len(out) >= limit {
		return out
	}
	switch r := recorded.(type) {
	case map[string]any:
		if q, ok := requested.(map[string]any); ok {
			keys := map[string]bool{}
			for k := range r {
				keys[k] = true
			}
			for k := range q {
				keys[k] = true
			}
			sorted := make([]string, 0, len(keys))
			for k := range keys {
				sorted = append(sorted, k)
			}
			sort.Strings(sorted)
			for _, k := range sorted {
				p := k
				if path != "" {
					p = path + "." + k
				}
				out = diff(p, r[k], q[k], limit, out)
			}
			return out
		}
	case []any:
		if q, ok := requested.([]any); ok {
			for i := 0; i < max(len(r), len(q)); i++ {
				var a, b any
				if i < len(r) {
					a = r[i]
				}
				if i < len(q) {
					b = q[i]
				}
				out = diff(fmt.Sprintf("%s[%d]", path, i), a, b, limit, out)
			}
			return out
		}
	}
	if !reflect.DeepEqual(recorded, requested) {
		out = append(out, Difference{Path: path, Recorded: recorded, Requested: requested})
	}
	return out
}

// describe renders differences for an error message.
func describe(diffs []Difference) string {
	parts := make([]string, 0, len(diffs))
	for _, d := range diffs {
		rec, _ := json.Marshal(d.Recorded)
		req, _ := json.Marshal(d.Requested)
		parts = append(parts, fmt.Sprintf("%s: recorded %s, requested %s", d.Path, rec, req))
	}
	return strings.Join(parts, "; ")
}
