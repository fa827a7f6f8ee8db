package normalize

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// errTruncated marks JSON that ends early: the emitter or an attribute length limit cut it.
var errTruncated = errors.New("truncated JSON")

// decodeAny turns an attribute value into plain Go values. A string is parsed as JSON when
// asJSON is set (semconv allows JSON strings where structured values are expected); numbers in
// parsed JSON stay json.Number so that re-encoding keeps their text.
func decodeAny(v pcommon.Value, asJSON bool) (any, error) {
	if v.Type() == pcommon.ValueTypeStr && asJSON {
		return parseJSON(v.Str())
	}
	return v.AsRaw(), nil
}

func parseJSON(s string) (any, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("%w: %d bytes", errTruncated, len(s))
		}
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("trailing data after JSON value")
	}
	return out, nil
}

// text renders a value as the text a replay needs: strings as they are, anything else as JSON.
func text(v any) string {
	switch t := v.(type) {
	case nil:
		return ""
	case string:
		return t
	case json.Number:
		return t.String()
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

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

// getInt reads an integer that may have been written as an int, a double or a string.
func getInt(a pcommon.Map, keys ...string) (int64, bool) {
	for _, k := range keys {
		if v, ok := a.Get(k); ok {
			if n, ok := toInt(v.AsRaw()); ok {
				return n, true
			}
		}
	}
	return 0, false
}

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

func toInt(v any) (int64, bool) {
	switch t := v.(type) {
	case int64:
		return t, true
	case float64:
		return int64(t), t == float64(int64(t))
	case json.Number:
		n, err := t.Int64()
		return n, err == nil
	case string:
		n, err := strconv.ParseInt(strings.TrimSpace(t), 10, 64)
		return n, err == nil
	}
	return 0, false
}

func toFloat(v any) (float64, bool) {
	switch t := v.(type) {
	case float64:
		return t, true
	case int64:
		return float64(t), true
	case json.Number:
		f, err := t.Float64()
		return f, err == nil
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(t), 64)
		return f, err == nil
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

// indexed groups flattened list attributes: prefix "llm.input_messages." turns
// "llm.input_messages.3.message.role" into item 3, field "message.role". Items come back in
// numeric order.
func indexed(a pcommon.Map, prefix string) []map[string]pcommon.Value {
	items := map[int]map[string]pcommon.Value{}
	for k, v := range a.All() {
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

func mapStr(m map[string]any, keys ...string) string {
	for _, k := range keys {
		if v, ok := m[k]; ok && v != nil {
			if s := text(v); s != "" {
				return s
			}
		}
	}
	return ""
}

func errNotArray(raw any) error { return fmt.Errorf("want an array, got %T", raw) }
