package scrub

import (
	"strings"
	"unsafe"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// A credential can be split over two sibling values (key_part_1, key_part_2, or two items of
// one list: ["sk-proj-Pl4nted", "Spl1tXq3v…"]) so that neither part matches alone. Each pair of
// neighbouring string values of one map, JSON object, attribute array or JSON array (attribute
// order for attributes, key order for JSON objects, item order for lists) is joined and the
// credential rules run over the join; a finding that starts in the first value and ends in the
// second masks both. Only token-like values are joined (no spaces, at most 256 bytes), and the
// personal-data detectors are not used: digits joined from two numbers pass a checksum by
// chance. Parts in different maps, spans or messages, not next to each other, or in another
// order, are not seen.

const maxSplitPart = 256

// smallObject is how many keys of a map or JSON object the scrubber lists on the stack; larger
// ones are listed on the heap. Messages, parts and tool calls have a handful.
const smallObject = 16

func tokenLike(v string) bool {
	return len(v) >= 4 && len(v) <= maxSplitPart && !strings.ContainsAny(v, " \t\n<")
}

// splitParts returns, for each index of values that holds part of a split credential, the
// kind found.
func (s *Scrubber) splitParts(values []string) map[int]string {
	var parts map[int]string // made on the first find: most attribute sets hold none
	var buf [2 * maxSplitPart]byte
	for i := 0; i+1 < len(values); i++ {
		a, b := values[i], values[i+1]
		if !tokenLike(a) || !tokenLike(b) {
			continue
		}
		// Pairs of short values repeat (provider and model, operation and system): a pair
		// found clean before, by these rules or by the whole policy, is not scanned again.
		// The pair is looked up joined on the stack (the caches keep no key they are asked
		// about) and copied to the heap only to be scanned.
		joined := append(append(buf[:0], a...), b...)
		if probe := unsafe.String(unsafe.SliceData(joined), len(joined)); s.splitClean.has(probe) || s.clean.has(probe) {
			continue
		}
		text := a + b
		var found []span
		digits := countDigits(text)
		for k := range s.detectors {
			if d := &s.detectors[k]; d.credential {
				found = append(found, s.detectorSpans(d, text, digits)...)
			}
		}
		found = append(found, s.gitleaksSpans(text)...)
		if len(found) == 0 {
			s.splitClean.add(text)
		}
		for _, f := range found {
			if f.start < len(a) && f.end > len(a) {
				if parts == nil {
					parts = map[int]string{}
				}
				parts[i], parts[i+1] = f.kind, f.kind
			}
		}
	}
	return parts
}

// splitMap masks split credentials among the string attributes of m.
func (s *Scrubber) splitMap(m pcommon.Map, r *Report) {
	var keyBuf, valueBuf [smallObject]string // on the stack for the maps most spans have
	keys, values := keyBuf[:0], valueBuf[:0]
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
	var valueBuf [smallObject]string
	values := valueBuf[:0]
	for _, k := range keys {
		v, _ := t[k].(string)
		values = append(values, v)
	}
	for i, kind := range s.splitParts(values) {
		t[keys[i]] = s.secretValue(kind, values[i], r)
	}
}

// splitSlice masks split credentials among neighbouring string items of an attribute array
// (an item of another type is no neighbour).
func (s *Scrubber) splitSlice(sl pcommon.Slice, r *Report) {
	s.splitItems(sl.Len(), func(i int) (string, bool) {
		v := sl.At(i)
		return v.Str(), v.Type() == pcommon.ValueTypeStr
	}, func(i int, v string) { sl.At(i).SetStr(v) }, r)
}

// splitList masks split credentials among neighbouring string items of a JSON array.
func (s *Scrubber) splitList(t []any, r *Report) {
	s.splitItems(len(t), func(i int) (string, bool) { v, ok := t[i].(string); return v, ok },
		func(i int, v string) { t[i] = v }, r)
}

// splitItems masks split credentials among neighbouring string items of a list of n: item
// returns the i-th item and whether it is a string, set replaces it with its masked value.
func (s *Scrubber) splitItems(n int, item func(i int) (string, bool), set func(i int, v string), r *Report) {
	pair := false
	for i := 0; i+1 < n && !pair; i++ {
		_, a := item(i)
		_, b := item(i + 1)
		pair = a && b
	}
	if !pair {
		return // numbers (an embedding), maps: nothing to join, and no list of values to make
	}
	var valueBuf [smallObject]string
	values := valueBuf[:0]
	for i := 0; i < n; i++ {
		v, _ := item(i) // "" for an item that is no string: no neighbour
		values = append(values, v)
	}
	for i, kind := range s.splitParts(values) {
		set(i, s.secretValue(kind, values[i], r))
	}
}
