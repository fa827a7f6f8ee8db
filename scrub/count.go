package scrub

import (
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Telemetry can be scrubbed where it arrives and judged later: the processor scrubs each
// request before it stores it ahead, so that no secret is on its disk, and builds the case when
// the run closes, from telemetry that may have been split, de-duplicated or restored since. The
// case's counts are then read from what the telemetry holds: each placeholder is one finding
// of its kind (scrubbing writes one placeholder per finding, and scrubbing scrubbed text finds
// nothing), so they count what the case's own telemetry had masked, whatever was dropped as a
// duplicate. A placeholder that was in the telemetry as received (a re-driven case) counts
// too: it stands for a value masked when that telemetry was first recorded.

// CountTraces adds to r one finding per placeholder in the fields of td that Traces scrubs,
// and changes nothing.
func (s *Scrubber) CountTraces(td ptrace.Traces, r *Report) {
	if s == nil {
		return
	}
	walkTraces(td, s.countingText(r), s.countingMap(r))
}

// CountLogs is CountTraces for the fields of ld that Logs scrubs.
func (s *Scrubber) CountLogs(ld plog.Logs, r *Report) {
	if s == nil {
		return
	}
	walkLogs(ld, s.countingText(r), s.countingMap(r), func(v pcommon.Value) { s.countValue(v, r) })
}

func (s *Scrubber) countingText(r *Report) func(string) string {
	return func(v string) string {
		s.countText(v, r)
		return v
	}
}

func (s *Scrubber) countingMap(r *Report) func(pcommon.Map) {
	return func(m pcommon.Map) { s.countMap(m, r) }
}

// countMap counts the placeholders in m's keys and values, nested ones included.
func (s *Scrubber) countMap(m pcommon.Map, r *Report) {
	for k, v := range m.All() {
		s.countText(k, r)
		s.countValue(v, r)
	}
}

func (s *Scrubber) countValue(v pcommon.Value, r *Report) {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		s.countText(v.Str(), r)
	case pcommon.ValueTypeBytes:
		s.countText(string(v.Bytes().AsRaw()), r)
	case pcommon.ValueTypeMap:
		s.countMap(v.Map(), r)
	case pcommon.ValueTypeSlice:
		for i := 0; i < v.Slice().Len(); i++ {
			s.countValue(v.Slice().At(i), r)
		}
	}
}

// placeholderOpen starts every placeholder (placeholder, scrub.go).
const placeholderOpen = "<secret:"

// countText counts the placeholders in v by kind, with the action the policy gives the kind
// (a built-in kind it no longer has, after a policy change, is counted as masked). Text shaped
// like a placeholder of a kind no scrubber of this policy writes is no placeholder
// (Scrubber.writes): it is not counted, so a client cannot add kinds of its own to a case.
func (s *Scrubber) countText(v string, r *Report) {
	if !strings.Contains(v, placeholderOpen) { // most strings hold none: one scan
		return
	}
	for _, loc := range s.placeholders(v) {
		kind := v[loc[2]:loc[3]]
		action := s.actions[kind]
		if action == "" {
			action = ActionMask
		}
		r.found(kind, action)
	}
}
