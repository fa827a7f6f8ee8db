package replayext

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"
)

// Divergence is a lenient or hybrid answer that was not an exact match, or a request that
// replay refused (Refused).
type Divergence struct {
	CaseID   string `json:"case_id"`
	Endpoint string `json:"endpoint"`
	// Served names the recorded item served instead (a call-site id, tool call id or span id);
	// empty for a live answer.
	Served string `json:"served,omitempty"`
	// Live is true when the request was forwarded to the upstream (hybrid mode): from here on
	// the session's model calls are answered live.
	Live bool `json:"live,omitempty"`
	// Refused is true when the request was not answered: strict replay's 404 (in hybrid mode
	// too, for a tool or retrieval lookup), a request after the case's last recorded item in
	// any mode, or hybrid's 400 for an API without an upstream. The client may have swallowed
	// the error and carried on; the log keeps the call the recording never had.
	Refused bool `json:"refused,omitempty"`
	// Paths are the fields where the request differs from the next recorded item; empty when
	// the case recorded no further item to compare with, or the request equals recordings the
	// session was served every one of (a finding without a path says which).
	Paths []string `json:"paths"`
	// Findings give each path its finding type, as `reprise diff` names them.
	Findings []Finding `json:"findings,omitempty"`
	// Differences carry the recorded and requested values; only with local_debug.
	Differences []Difference `json:"differences,omitempty"`
	Time        time.Time    `json:"time"`
}

// Difference is one field where a request differs from a recording, with both values. It
// reveals recorded content, so it leaves the server only with local_debug.
type Difference struct {
	Path      string `json:"path"`
	Recorded  any    `json:"recorded"`
	Requested any    `json:"requested"`
}

// maxDifferences bounds how many differing fields a comparison reports.
const maxDifferences = 20

// diff lists where a request differs from a recording, as paths like
// messages[1].content[0].text; at most maxDifferences. It is built so that the paths never
// depend on whether a guessed secret is right, because they leave the server: objects whose
// key sets differ are reported whole (a key may itself be a scrubbed value), and a string that
// holds a scrubbed-value placeholder on either side is always reported (otherwise its absence
// would confirm a guess). Matching uses plain equality, not diff.
func diff(path string, recorded, requested any, out []Difference) []Difference {
	if len(out) >= maxDifferences {
		return out
	}
	switch r := recorded.(type) {
	case map[string]any:
		if q, ok := requested.(map[string]any); ok && sameKeys(r, q) {
			keys := make([]string, 0, len(r))
			for k := range r {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				p := k
				if path != "" {
					p = path + "." + k
				}
				out = diff(p, r[k], q[k], out)
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
				out = diff(fmt.Sprintf("%s[%d]", path, i), a, b, out)
			}
			return out
		}
	}
	if !reflect.DeepEqual(recorded, requested) || holdsPlaceholder(recorded) || holdsPlaceholder(requested) {
		out = append(out, Difference{Path: path, Recorded: recorded, Requested: requested})
	}
	return out
}

// diffRequest is diff of two canonical model requests (callsite.Request.Canonical). Their
// top-level keys are the call-site id's fixed field names (model, messages, tools,
// response_format, …), never values, so a field only one side has is reported by its name
// instead of as the whole request: a request asking for JSON output against a recording made
// for text says "response_format". Below the top level diff's rules hold.
func diffRequest(recorded, requested map[string]any) []Difference {
	keys := make([]string, 0, len(recorded)+len(requested))
	for k := range recorded {
		keys = append(keys, k)
	}
	for k := range requested {
		if _, ok := recorded[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var out []Difference
	for _, k := range keys {
		r, inRecorded := recorded[k]
		q, inRequested := requested[k]
		if inRecorded && inRequested {
			out = diff(k, r, q, out)
		} else if len(out) < maxDifferences {
			out = append(out, Difference{Path: k, Recorded: r, Requested: q})
		}
	}
	return out
}

func sameKeys(a, b map[string]any) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if _, ok := b[k]; !ok || holdsPlaceholder(k) {
			return false
		}
	}
	return true
}

// holdsPlaceholder reports a string in which the scrubber replaced a secret or personal value.
func holdsPlaceholder(v any) bool {
	s, ok := v.(string)
	return ok && strings.Contains(s, "<secret:")
}

// paths are the differing fields' paths alone: what may leave the server.
func paths(diffs []Difference) []string {
	out := make([]string, len(diffs))
	for i, d := range diffs {
		out[i] = d.Path
	}
	return out
}

// equalJSON is the matcher of tool calls and retrievals: the request equals the recording.
func equalJSON(recorded, requested any) bool { return reflect.DeepEqual(recorded, requested) }
