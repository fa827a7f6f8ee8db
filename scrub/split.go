package scrub

import (
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// A credential can be split over two sibling values (key_part_1, key_part_2) so that neither
// part matches alone. Sibling string values of one map or JSON object are joined in order
// (attribute order for attributes, key order for JSON objects) and the credential rules run
// over the join; a finding that crosses from one value into the next masks every value it
// touches. Personal-data detectors are not used here: digits joined from two numbers pass a
// checksum by chance. Parts in different maps, spans or messages, or in another order, are
// not seen.

const (
	maxSplitValues = 32   // more siblings than this are a record, not parts of one secret
	maxSplitPart   = 1024 // a part is short; long values (prompts) are not joined
)

// splitParts returns, for each index of values that holds part of a split credential, the
// kind found.
func (s *Scrubber) splitParts(values []string) map[int]string {
	if len(values) < 2 || len(values) > maxSplitValues {
		return nil
	}
	var joined strings.Builder
	starts := make([]int, len(values)+1)
	for i, v := range values {
		starts[i] = joined.Len()
		if len(v) <= maxSplitPart && !strings.Contains(v, "<secret:") {
			joined.WriteString(v)
		}
	}
	starts[len(values)] = joined.Len()
	text := joined.String()
	if len(text) < 8 {
		return nil
	}
	var found []span
	digits := countDigits(text)
	for i := range s.detectors {
		if d := &s.detectors[i]; d.credential {
			found = append(found, s.detectorSpans(d, text, digits)...)
		}
	}
	found = append(found, s.gitleaksSpans(text)...)
	parts := map[int]string{}
	for _, f := range found {
		var touched []int
		for i := range values {
			if starts[i] < starts[i+1] && f.start < starts[i+1] && f.end > starts[i] {
				touched = append(touched, i)
			}
		}
		if len(touched) < 2 {
			continue // within one value: the value's own scan handles it
		}
		for _, i := range touched {
			parts[i] = f.kind
		}
	}
	return parts
}

// splitMap masks split credentials among the string attributes of m.
func (s *Scrubber) splitMap(m pcommon.Map, r *Report) {
	var keys, values []string
	for k, v := range m.All() {
		if v.Type() == pcommon.ValueTypeStr {
			keys, values = append(keys, k), append(values, v.Str())
		}
	}
	for i, kind := range s.splitParts(values) {
		v, _ := m.Get(keys[i])
		v.SetStr(s.secretValue(kind, values[i], r))
	}
}

// splitJSON masks split credentials among the string values of t, in the order of keys.
func (s *Scrubber) splitJSON(t map[string]any, keys []string, r *Report) {
	values := make([]string, len(keys))
	for i, k := range keys {
		values[i], _ = t[k].(string)
	}
	for i, kind := range s.splitParts(values) {
		t[keys[i]] = s.secretValue(kind, values[i], r)
	}
}
