package casediff

import (
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

// valueChange is one leaf where two JSON values differ.
type valueChange struct {
	Path          string
	Before, After any
}

// jsonValue reads text as a JSON value; text that is not JSON stays a string, so arguments
// recorded as plain text still compare. Numbers stay json.Number, as written: decoded into
// float64, integers beyond 2^53 (ids) collapse and a changed one compares equal.
func jsonValue(text string) any {
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err == nil {
		if _, err := dec.Token(); err == io.EOF { // one value and nothing after it, as json.Unmarshal requires
			return v
		}
	}
	return strings.TrimSpace(text)
}

// jsonNull is a JSON null that is there, told apart from a key or an element that is not: in
// decoded JSON both are nil, and {"coupon": null} would equal {} ({"coupon": null} may reset a
// field an absent key leaves alone). It is written as null.
type jsonNull struct{}

func (jsonNull) MarshalJSON() ([]byte, error) { return []byte("null"), nil }

// present is v, found in an object or array: a JSON null becomes jsonNull.
func present(v any) any {
	if v == nil {
		return jsonNull{}
	}
	return v
}

// equalValues reports whether two JSON values are the same.
func equalValues(a, b any) bool { return len(diffValues("", a, b)) == 0 }

// sameLeaf compares two values that are not objects or arrays; numbers by value, so 1 and 1.0
// are the same number and 9007199254740993 and 9007199254740992 are not.
func sameLeaf(a, b any) bool {
	na, okA := a.(json.Number)
	nb, okB := b.(json.Number)
	if !okA || !okB {
		return reflect.DeepEqual(a, b)
	}
	if na == nb {
		return true
	}
	// Integers exactly, whatever their size (big.Int, not big.Rat: "1e999999999" would make
	// big.Rat build a billion-digit number); other numbers as float64, as before.
	ia, okA := new(big.Int).SetString(string(na), 10)
	ib, okB := new(big.Int).SetString(string(nb), 10)
	if okA && okB {
		return ia.Cmp(ib) == 0
	}
	fa, errA := strconv.ParseFloat(string(na), 64)
	fb, errB := strconv.ParseFloat(string(nb), 64)
	return errA == nil && errB == nil && fa == fb
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
			var x, y any // nil: the key is absent
			if v, ok := av[k]; ok {
				x = present(v)
			}
			if v, ok := bv[k]; ok {
				y = present(v)
			}
			out = append(out, diffValues(path+"."+k, x, y)...)
		}
		return out
	case []any:
		bv, ok := b.([]any)
		if !ok {
			break
		}
		var out []valueChange
		for i := 0; i < max(len(av), len(bv)); i++ {
			var x, y any // nil: past the array's end
			if i < len(av) {
				x = present(av[i])
			}
			if i < len(bv) {
				y = present(bv[i])
			}
			out = append(out, diffValues(fmt.Sprintf("%s[%d]", path, i), x, y)...)
		}
		return out
	}
	if sameLeaf(a, b) {
		return nil
	}
	return []valueChange{{Path: path, Before: a, After: b}}
}
