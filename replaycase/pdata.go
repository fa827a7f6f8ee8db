package replaycase

import (
	"reflect"
	"strings"
	"sync"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// putValue stores v as a structured attribute value, field names and omitempty taken from the
// JSON tags, so that the value reads back with encoding/json exactly as it was (see getJSON).
// It is the encoder's hot path; it avoids a JSON round trip per attribute.
func putValue(dst pcommon.Value, v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			putValue(dst, v.Elem())
		}
	case reflect.String:
		dst.SetStr(v.String())
	case reflect.Bool:
		dst.SetBool(v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		dst.SetInt(v.Int())
	case reflect.Float32, reflect.Float64:
		dst.SetDouble(v.Float())
	case reflect.Slice:
		if v.IsNil() {
			return // null, as encoding/json writes it
		}
		if v.Type().Elem().Kind() == reflect.Uint8 {
			dst.SetEmptyBytes().FromRaw(v.Bytes())
			return
		}
		s := dst.SetEmptySlice()
		s.EnsureCapacity(v.Len())
		for i := 0; i < v.Len(); i++ {
			putValue(s.AppendEmpty(), v.Index(i))
		}
	case reflect.Map:
		if v.IsNil() {
			return
		}
		m := dst.SetEmptyMap()
		iter := v.MapRange()
		for iter.Next() {
			putValue(m.PutEmpty(iter.Key().String()), iter.Value())
		}
	case reflect.Struct:
		m := dst.SetEmptyMap()
		for _, f := range structFields(v.Type()) {
			fv := v.Field(f.index)
			if f.omitEmpty && fv.IsZero() {
				continue
			}
			putValue(m.PutEmpty(f.name), fv)
		}
	}
}

type field struct {
	index     int
	name      string
	omitEmpty bool
}

var fieldCache sync.Map // reflect.Type -> []field

// structFields lists the JSON-visible fields of a struct type.
func structFields(t reflect.Type) []field {
	if fs, ok := fieldCache.Load(t); ok {
		return fs.([]field)
	}
	var fs []field
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" || !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		fs = append(fs, field{index: i, name: name, omitEmpty: opts == "omitempty"})
	}
	fieldCache.Store(t, fs)
	return fs
}
