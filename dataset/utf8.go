package dataset

import (
	"reflect"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"
)

// RepairUTF8 replaces every invalid UTF-8 sequence in the strings reachable from v (a pointer)
// with U+FFFD and returns how many strings it changed. Parquet STRING columns must hold UTF-8:
// DuckDB refuses a file with one invalid value ("not valid UTF8") and with it every other row
// of the file. The processor repairs its input too; this is the last line before the disk.
// Byte slices (raw_spans, raw_events) are BLOB columns and are left as they are. It is
// exported for `reprise mutate`, which repairs a case before deriving one from it, so that the
// case it compares with the stored row is the one this writer stores.
func RepairUTF8(v any) int {
	return repairValue(reflect.ValueOf(v))
}

func repairValue(v reflect.Value) int {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return 0
		}
		return repairValue(v.Elem())
	case reflect.String:
		if utf8.ValidString(v.String()) || !v.CanSet() {
			return 0
		}
		v.SetString(strings.ToValidUTF8(v.String(), "\uFFFD"))
		return 1
	case reflect.Struct:
		n := 0
		for _, i := range stringFieldsOf(v.Type()) {
			n += repairValue(v.Field(i))
		}
		return n
	case reflect.Slice, reflect.Array:
		if !holdsString(v.Type().Elem()) {
			return 0
		}
		n := 0
		for i := 0; i < v.Len(); i++ {
			n += repairValue(v.Index(i))
		}
		return n
	case reflect.Map:
		return repairMap(v)
	}
	return 0
}

// The walk visits only the fields and elements that may hold a string: a case has hundreds of
// numbers, times and flags, and looking each field up by reflection every time cost as much as
// encoding the case. What a type may hold is worked out once.
var (
	stringFields sync.Map // struct type → indexes of its exported fields that may hold a string
	holdsStrings sync.Map // type → whether a value of it may hold a string
)

func stringFieldsOf(t reflect.Type) []int {
	if fields, ok := stringFields.Load(t); ok {
		return fields.([]int)
	}
	fields := []int{}
	for i := 0; i < t.NumField(); i++ {
		if f := t.Field(i); f.IsExported() && holdsString(f.Type) {
			fields = append(fields, i)
		}
	}
	stringFields.Store(t, fields)
	return fields
}

func holdsString(t reflect.Type) bool {
	if holds, ok := holdsStrings.Load(t); ok {
		return holds.(bool)
	}
	holds := mayHoldString(t, map[reflect.Type]bool{})
	holdsStrings.Store(t, holds)
	return holds
}

// mayHoldString reports whether a value of type t may reach a string the walk repairs. seen
// holds the struct types being looked into, so that a recursive type ends.
func mayHoldString(t reflect.Type, seen map[reflect.Type]bool) bool {
	switch t.Kind() {
	case reflect.String, reflect.Interface:
		return true
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return t.Elem().Kind() != reflect.Uint8 && mayHoldString(t.Elem(), seen)
	case reflect.Map:
		return mayHoldString(t.Key(), seen) || mayHoldString(t.Elem(), seen)
	case reflect.Struct:
		if seen[t] {
			return false // a string reachable through t is reachable without this repetition
		}
		seen[t] = true
		for i := 0; i < t.NumField(); i++ {
			if f := t.Field(i); f.IsExported() && mayHoldString(f.Type, seen) {
				return true
			}
		}
	}
	return false
}

// repairMap rewrites the entries whose key or value holds invalid UTF-8 (map entries are not
// addressable, so each is copied, repaired and stored back). Distinct keys can repair to the same
// key ("k\xff" and "k\xfe" both become "k\uFFFD", which may also be a valid key of the map): stored
// back as they are, one entry would overwrite the other and a value be lost without a trace. So
// a repaired key that is taken gets another U+FFFD until it is free, the keys taken in sorted
// order so that which entry gets which key does not depend on the map's iteration order.
func repairMap(m reflect.Value) int {
	type entry struct{ orig, key, val reflect.Value }
	var moved []entry // entries whose key changed, removed from the map until every key is known
	n := 0
	for _, key := range m.MapKeys() {
		k := reflect.New(key.Type()).Elem()
		k.Set(key)
		val := reflect.New(m.Type().Elem()).Elem()
		val.Set(m.MapIndex(key))
		keyChanged := repairValue(k.Addr())
		changed := keyChanged + repairValue(val.Addr())
		if changed == 0 {
			continue
		}
		n += changed
		if keyChanged == 0 {
			m.SetMapIndex(key, val)
			continue
		}
		m.SetMapIndex(key, reflect.Value{})
		moved = append(moved, entry{key, k, val})
	}
	if m.Type().Key().Kind() == reflect.String {
		sort.Slice(moved, func(i, j int) bool { return moved[i].orig.String() < moved[j].orig.String() })
	}
	for _, e := range moved {
		for e.key.Kind() == reflect.String && m.MapIndex(e.key).IsValid() {
			e.key.SetString(e.key.String() + "\uFFFD")
		}
		m.SetMapIndex(e.key, e.val)
	}
	return n
}
