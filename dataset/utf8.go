package dataset

import (
	"reflect"
	"strings"
	"unicode/utf8"
)

// repairUTF8 replaces every invalid UTF-8 sequence in the strings reachable from v (a pointer)
// with U+FFFD and returns how many strings it changed. Parquet STRING columns must hold UTF-8:
// DuckDB refuses a file with one invalid value ("not valid UTF8") and with it every other row
// of the file. The processor repairs its input too; this is the last line before the disk.
// Byte slices (raw_spans, raw_events) are BLOB columns and are left as they are.
func repairUTF8(v any) int {
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
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				n += repairValue(v.Field(i))
			}
		}
		return n
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
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

// repairMap rewrites the entries whose key or value holds invalid UTF-8 (map entries are not
// addressable, so each is copied, repaired and stored back).
func repairMap(m reflect.Value) int {
	n := 0
	for _, key := range m.MapKeys() {
		k := reflect.New(key.Type()).Elem()
		k.Set(key)
		val := reflect.New(m.Type().Elem()).Elem()
		val.Set(m.MapIndex(key))
		changed := repairValue(k.Addr()) + repairValue(val.Addr())
		if changed == 0 {
			continue
		}
		n += changed
		m.SetMapIndex(key, reflect.Value{})
		m.SetMapIndex(k, val)
	}
	return n
}
