package casediff

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
)

// valueChange is one leaf where two JSON values differ.
type valueChange struct {
	Path          string
	Before, After any
}

// jsonValue reads text as a JSON value; text that is not JSON stays a string, so arguments
// recorded as plain text still compare.
func jsonValue(text string) any {
	var v any
	if err := json.Unmarshal([]byte(text), &v); err == nil {
		return v
	}
	return strings.TrimSpace(text)
}

// diffValues lists where b differs from a, as JSON paths below path (".key", "[i]"). Objects are
// compared key by key, arrays index by index, anything else as a whole.
func diffValues(path string, a, b any) []valueChange {
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok {
			break
		}
		keys := map[string]bool{}
		for k := range av {
			keys[k] = true
		}
		for k := range bv {
			keys[k] = true
		}
		names := make([]string, 0, len(keys))
		for k := range keys {
			names = append(names, k)
		}
		sort.Strings(names)
		var out []valueChange
		for _, k := range names {
			out = append(out, diffValues(path+"."+k, av[k], bv[k])...)
		}
		return out
	case []any:
		bv, ok := b.([]any)
		if !ok {
			break
		}
		var out []valueChange
		for i := 0; i < max(len(av), len(bv)); i++ {
			var x, y any
			if i < len(av) {
				x = av[i]
			}
			if i < len(bv) {
				y = bv[i]
			}
			out = append(out, diffValues(fmt.Sprintf("%s[%d]", path, i), x, y)...)
		}
		return out
	}
	if reflect.DeepEqual(a, b) {
		return nil
	}
	return []valueChange{{Path: path, Before: a, After: b}}
}
