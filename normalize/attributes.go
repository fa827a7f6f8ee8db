package normalize

import (
	"iter"
	"maps"
	"sort"
	"strconv"
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

// getFloat reads a number that may have been written as a double, an int or a string.
func getFloat(a pcommon.Map, keys ...string) (float64, bool) {
	for _, k := range keys {
		if v, ok := a.Get(k); ok {
			if f, ok := toFloat(v.AsRaw()); ok {
				return f, true
			}
		}
	}
	return 0, false
}

// getStrings reads a string list written as an array, a JSON array string, or one string.
func getStrings(a pcommon.Map, key string) []string {
	v, ok := a.Get(key)
	if !ok {
		return nil
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

// indexed groups flattened list attributes: prefix "llm.input_messages." turns
// "llm.input_messages.3.message.role" into item 3, field "message.role". Items come back in
// numeric order.
func indexed(a pcommon.Map, prefix string) []map[string]pcommon.Value {
	return indexedFields(a.All(), prefix)
}

// indexedFields is indexed over any key / value sequence.
func indexedFields(fields iter.Seq2[string, pcommon.Value], prefix string) []map[string]pcommon.Value {
	items := map[int]map[string]pcommon.Value{}
	for k, v := range fields {
		if !strings.HasPrefix(k, prefix) {
			continue
		}
		rest := k[len(prefix):]
		dot := strings.IndexByte(rest, '.')
		if dot <= 0 {
			continue
		}
		i, err := strconv.Atoi(rest[:dot])
		if err != nil || i < 0 {
			continue
		}
		if items[i] == nil {
			items[i] = map[string]pcommon.Value{}
		}
		items[i][rest[dot+1:]] = v
	}
	idx := make([]int, 0, len(items))
	for i := range items {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	out := make([]map[string]pcommon.Value, len(idx))
	for n, i := range idx {
		out[n] = items[i]
	}
	return out
}

// indexedSub groups the fields of one flattened item further: "message.tool_calls.0.tool_call.id"
// with prefix "message.tool_calls." becomes item 0, field "tool_call.id".
func indexedSub(item map[string]pcommon.Value, prefix string) []map[string]string {
	var out []map[string]string
	for _, sub := range indexedFields(maps.All(item), prefix) {
		fields := map[string]string{}
		for k, v := range sub {
			fields[k] = v.AsString()
		}
		out = append(out, fields)
	}
	return out
}
