package normalize

import (
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

func getStr(a pcommon.Map, keys ...string) string {
	for _, k := range keys {
		if v, ok := a.Get(k); ok {
			if s := v.AsString(); s != "" {
				return s
			}
		}
	}
	return ""
}

// getStrings reads a string list written as an array, a JSON array string, or one string.
func getStrings(a pcommon.Map, key string) []string {
	v, ok := a.Get(key)
	if !ok {
		return nil
	}
	if v.Type() == pcommon.ValueTypeSlice { // read in place: AsRaw would box every element
		s := v.Slice()
		out := make([]string, s.Len())
		for i := range s.Len() {
			if e := s.At(i); e.Type() == pcommon.ValueTypeStr {
				out[i] = e.Str()
			} else {
				out[i] = text(e.AsRaw())
			}
		}
		return out
	}
	raw := v.AsRaw()
	if s, ok := raw.(string); ok {
		if parsed, err := parseJSON(s); err == nil {
			raw = parsed
		} else {
			return []string{s}
		}
	}
	list, ok := raw.([]any)
	if !ok {
		return []string{text(raw)}
	}
	out := make([]string, 0, len(list))
	for _, x := range list {
		out = append(out, text(x))
	}
	return out
}

func hasPrefix(a pcommon.Map, prefix string) bool {
	for k := range a.All() {
		if strings.HasPrefix(k, prefix) {
			return true
		}
	}
	return false
}

// jsonAttr parses an attribute that holds JSON text (or a structured value). A value that does
// not parse is recorded as a finding and reported absent.
func jsonAttr(a pcommon.Map, key string, b *stepBuilder) (any, bool) {
	v, ok := a.Get(key)
	if !ok {
		return nil, false
	}
	if v.Type() == pcommon.ValueTypeStr {
		s := strings.TrimSpace(v.Str())
		if s == "" || (s[0] != '{' && s[0] != '[') {
			return nil, false // plain text, not JSON: nothing to parse
		}
	}
	raw, err := decodeAny(v, true)
	if err != nil {
		b.problem(key, err)
		return nil, false
	}
	return raw, true
}
